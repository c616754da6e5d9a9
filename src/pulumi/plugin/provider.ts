/**
 * The provider plugin's verbs: the same `check`/`diff`/`create`/`read`/`update`/`delete` as the dynamic resource
 * (`makeProvider` of `provider-impl`, one implementation of every rule), behind Pulumi's provider protocol as
 * `@pulumi/pulumi/provider` serves it. What this adapter adds is only what the protocol differs in:
 *
 * - the prefix of the credential names comes from the resource's URN (the dynamic resource computes it in the program),
 *   once: `check` keeps the prefix the state already has, so a rename with an alias never moves the credentials;
 * - values arrive and leave in the engine's wire form (`wire.ts`): the connection, the backup, the credential's secret,
 *   its document and every input that came in secret go back to the engine wrapped as secrets;
 * - errors name the resource (type and name) before the verbs' message, which names the field and the rule.
 */
import type * as pulumiProvider from '@pulumi/pulumi/provider';
import { makeProvider, type ProviderDeps } from '../provider-impl';
import { parseUrn, pulumiPrefix } from '../prefix';
import { SECRET_OUTPUTS, type ProviderInputs, type ProviderOutputs } from '../state';
import { APPLICATION_CREDENTIAL, packageSchema } from './schema';
import { conceal, reveal, secretKeys } from './wire';

/** Inputs the checked inputs carry as secrets whatever the program gave (as the dynamic resource wraps them). */
const SECRET_INPUTS = ['connection', 'backup'] as const;

type Loose = Record<string, unknown>;

/** `<type> resource '<name>'`, as the engine names a resource in its own messages. */
function resourceOf(urn: string): string {
  const { type, name } = parseUrn(urn);
  return `${type} resource '${name}'`;
}

/** Runs `verb`; an error it throws is rethrown with the resource's name in front (its partial state, if any, kept). */
async function naming<T>(urn: string, verb: () => Promise<T>, secrets: Iterable<string> = []): Promise<T> {
  try {
    return await verb();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const named = new Error(`${resourceOf(urn)}: ${message}`);
    const partial = error as { id?: unknown; properties?: unknown; reasons?: unknown };
    if (typeof partial.id === 'string' && partial.properties !== undefined) {
      // An error after the switch carries the outputs so far, which the engine stores as the resource's state.
      Object.assign(named, { id: partial.id, properties: conceal(partial.properties as object, [...SECRET_OUTPUTS, ...secrets]), reasons: [named.message] });
    }
    throw named;
  }
}

function assertType(urn: string): void {
  const { type } = parseUrn(urn);
  if (type !== APPLICATION_CREDENTIAL) throw new Error(`the keystone-appcred provider has no resource type ${type} (it has ${APPLICATION_CREDENTIAL})`);
}

/** The plugin's provider: `version` is the package's, reported to the engine and written into the schema. */
export function pluginProvider(version: string, deps: ProviderDeps = {}): pulumiProvider.Provider {
  const verbs = makeProvider(deps);
  const schema = JSON.stringify(packageSchema(version));
  return {
    version,
    getSchema: async () => schema,

    async check(urn: string, olds: Loose, news: Loose): Promise<pulumiProvider.CheckResult> {
      assertType(urn);
      const previous = reveal<Loose>(olds);
      const { project, stack, name, type } = parseUrn(urn);
      const prefix = typeof previous.prefix === 'string' ? previous.prefix : pulumiPrefix({ project, stack, name, type });
      const { inputs, failures } = await verbs.check(previous, { ...reveal<Loose>(news), prefix });
      return { inputs: conceal(inputs, [...SECRET_INPUTS, ...secretKeys(news)]), failures };
    },

    async diff(id: string, urn: string, olds: Loose, news: Loose): Promise<pulumiProvider.DiffResult> {
      return naming(urn, () => verbs.diff(id, reveal<ProviderOutputs>(olds), reveal<ProviderInputs>(news)));
    },

    async create(urn: string, inputs: Loose): Promise<pulumiProvider.CreateResult> {
      assertType(urn);
      const secrets = secretKeys(inputs);
      const { id, outs } = await naming(urn, () => verbs.create(reveal<ProviderInputs>(inputs)), secrets);
      return { id, outs: conceal(outs, [...SECRET_OUTPUTS, ...secrets]) };
    },

    async update(id: string, urn: string, olds: Loose, news: Loose): Promise<pulumiProvider.UpdateResult> {
      const secrets = secretKeys(news);
      const { outs } = await naming(urn, () => verbs.update(id, reveal<ProviderOutputs>(olds), reveal<ProviderInputs>(news)), secrets);
      return { outs: conceal(outs, [...SECRET_OUTPUTS, ...secrets]) };
    },

    /** Refresh. An import (no state to read from) is refused: a credential's secret cannot be read back from Keystone. */
    async read(id: string, urn: string, props?: Loose): Promise<pulumiProvider.ReadResult> {
      const state = reveal<Partial<ProviderOutputs>>(props ?? {});
      if (typeof state.prefix !== 'string') {
        throw new Error(`${resourceOf(urn)}: cannot import ${JSON.stringify(id)}: Keystone never shows an application credential's secret again, so an existing credential cannot be adopted; declare the resource and let \`pulumi up\` mint one`);
      }
      const secrets = secretKeys(props);
      const read = await naming(urn, () => verbs.read(id, state as ProviderOutputs));
      return { id: read.id, props: conceal(read.props, [...SECRET_OUTPUTS, ...secrets]) };
    },

    async delete(id: string, urn: string, props: Loose): Promise<void> {
      await naming(urn, () => verbs.delete(id, reveal<ProviderOutputs>(props)));
    },
  };
}
