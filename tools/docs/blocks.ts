/**
 * Every block the reference generator writes, by the name a page's markers give it (tools/docs/markdown.ts), and what
 * each is made from: the command line's definitions, the metrics registries, the RBAC rule tables, the CRDs the
 * constructs synthesize, the condition reasons and the Event reasons.
 */
import { operatorSettings, subcommandOptions, subcommands } from './cli';
import { conditionsTable, troubleshootingIndex } from './conditions';
import { crdKinds, crdReference } from './crds';
import { eventsTable } from './events';
import { metrics } from './metrics';
import { pulumiInputs, pulumiOutputs } from './pulumi';
import { clusterWideRules, namespacedRules, targetClusterRules } from './rbac';

/** Every block, by name: `cli-<subcommand>`, `crd-<kind in lower case>`, and the rest by what they list. */
export async function blocks(): Promise<Map<string, string>> {
  return new Map<string, string>([
    ['operator-settings', operatorSettings()],
    ...subcommands().map((name): [string, string] => [`cli-${name}`, subcommandOptions(name)]),
    ['metrics-operator', await metrics('operator')],
    ['metrics-credential', await metrics('credential')],
    ['metrics-handoff', await metrics('handoff')],
    ['rbac-cluster-wide', clusterWideRules()],
    ['rbac-namespaced', namespacedRules()],
    ['rbac-target-cluster', targetClusterRules()],
    ...crdKinds().map((kind): [string, string] => [`crd-${kind.toLowerCase()}`, crdReference(kind)]),
    ['pulumi-inputs', pulumiInputs()],
    ['pulumi-outputs', pulumiOutputs()],
    ['conditions', conditionsTable()],
    ['troubleshoot-index', troubleshootingIndex()],
    ['events', eventsTable()],
  ]);
}
