/**
 * With the handoff off (no `--consumer-handoff`), the operator neither watches nor rolls workloads, and its RBAC (the
 * construct without `consumerHandoff`) grants nothing on them. A workload that opted in would silently never be rolled,
 * so at start-up the operator lists the workload kinds once and, when some opted in, says so in one log line. With RBAC
 * that does not allow the list (the construct's default) it cannot know, and says nothing above debug level.
 */
import type { KubeApi } from '../../kube/api';
import { KubeApiError, isForbidden } from '../../kube/errors';
import { METADATA_ACCEPT } from '../../kube/transport';
import { OPT_IN, optInOf } from '../../handoff';
import { errorMessage, type Logger } from '../runtime/log';
import { WorkloadKinds } from './workloads';

/** The size of one page of the scan. */
const PAGE = 500;

/**
 * The opted-in workloads found (`Kind namespace/name`), or undefined when the operator may not list them. The scan reads
 * one page at a time of the workloads' metadata (`PartialObjectMetadataList`: the opt-in is an annotation) and keeps
 * only the names it finds, so it never holds a cluster's workloads at once (a heap the process grows to at start-up is
 * mostly kept for good).
 */
export async function optedInWorkloads(api: KubeApi): Promise<string[] | undefined> {
  const found: string[] = [];
  for (const kind of Object.values(WorkloadKinds)) {
    let cont: string | undefined;
    do {
      const path = api.path(kind);
      const res = await api.transport.request({ method: 'GET', path, query: { limit: PAGE, continue: cont }, accept: METADATA_ACCEPT.list, omitLastApplied: true });
      if (res.status < 200 || res.status >= 300) {
        const error = KubeApiError.from(res.status, res.body, `GET ${path}`);
        if (isForbidden(error)) return undefined;
        throw error;
      }
      const page = res.body as { metadata?: { continue?: string }; items?: { metadata: { name: string; namespace?: string; annotations?: Record<string, string> } }[] };
      for (const item of page.items ?? []) if (optInOf(item.metadata.annotations).length > 0) found.push(`${kind.kind} ${item.metadata.namespace}/${item.metadata.name}`);
      cont = page.metadata?.continue || undefined;
    } while (cont);
  }
  return found;
}

/** The start-up line of an operator whose handoff is off, when workloads opted in. */
export async function reportHandoffOff(api: KubeApi, logger: Logger): Promise<void> {
  try {
    const found = await optedInWorkloads(api);
    if (found === undefined) {
      logger.debug('consumer handoff is off; workloads cannot be listed to look for opted-in ones', { annotation: OPT_IN });
      return;
    }
    if (found.length === 0) return;
    logger.warn('consumer handoff is off: workloads that opted in are not rolled when their credential switches; start the operator with --consumer-handoff (the construct\'s consumerHandoff: true, manifests --consumer-handoff) to roll them', {
      annotation: OPT_IN,
      workloads: found.length,
      first: found.slice(0, 5).join(', '),
    });
  } catch (error) {
    logger.debug('consumer handoff is off; listing workloads failed', { error: errorMessage(error) });
  }
}
