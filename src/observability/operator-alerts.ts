/**
 * The alerts on the operator itself: its reach (Keystone at each endpoint answering and accepting its requests, each
 * registered target cluster connected) and its health (a leader, ready replicas, memory below the limit), per
 * installation (the scrape job `operatorSelector` names).
 */
import type { AlertParameters } from './alert-parameters';
import { alertRuleMaker, type AlertGroup } from './alert-rule';

/** The group `keystone-appcred.keystone`, with the parameters resolved: Keystone unreachable or refusing, per endpoint. */
export function keystoneAlertGroup(p: Required<AlertParameters>): AlertGroup {
  const rule = alertRuleMaker(p.runbookBaseUrl);
  const requests = 'keystone_appcred_keystone_requests_total';
  const unanswered = `${requests}{result=~"transport|timeout|server"}`;
  const window = p.keystoneWindow;
  return {
    name: 'keystone-appcred.keystone',
    rules: [
      rule(
        'KeystoneAppCredKeystoneUnreachable',
        'critical',
        `(sum by (endpoint, result) (rate(${unanswered}[${window}])) / on(endpoint) group_left() sum by (endpoint) (rate(${requests}[${window}])))\n` +
          `and on(endpoint) (sum by (endpoint) (rate(${unanswered}[${window}])) / sum by (endpoint) (rate(${requests}[${window}])) > ${p.keystoneFailureRatio})`,
        p.keystoneUnreachableFor,
        'Keystone at {{ $labels.endpoint }} does not answer the operator ({{ $labels.result }}: {{ $value | humanizePercentage }} of its requests)',
        `More than ${percent(p.keystoneFailureRatio)} of the operator's requests to {{ $labels.endpoint }} over ${window} got no answer or a 5xx; {{ $value | humanizePercentage }} failed with {{ $labels.result }} (transport: no connection, timeout: no reply in time, server: 5xx or 429). ` +
          'Nothing rotates or is swept while Keystone cannot be listed; delivered credentials stay as they are and keep working until they expire. The orders report CredentialError, the ControlPlane KeystoneUnreachable. Check the ControlPlane\'s authURL, the CA bundle and the network path from the operator\'s pods to Keystone.',
      ),
      rule(
        'KeystoneAppCredKeystoneRefusing',
        'warning',
        `sum by (endpoint, result) (increase(${requests}{result=~"unauthorized|forbidden"}[${window}])) > 0`,
        p.keystoneRefusingFor,
        'Keystone at {{ $labels.endpoint }} keeps refusing the operator ({{ $labels.result }})',
        `Keystone at {{ $labels.endpoint }} answered {{ $labels.result }} (401 unauthorized: a password or token refused; 403 forbidden: its policy refuses the call) to {{ $value | humanize }} of the operator's requests in the last ${window}, for ${p.keystoneRefusingFor} on end. ` +
          'The orders concerned report CredentialError with Keystone\'s words, a ControlPlane AuthenticationFailed: keystone-appcred status -A names them.',
      ),
    ],
  };
}

/** The group `keystone-appcred.operator`, with the parameters resolved: a target cluster gone, no leader, a replica not ready, memory. */
export function operatorAlertGroup(p: Required<AlertParameters>): AlertGroup {
  const rule = alertRuleMaker(p.runbookBaseUrl);
  const sel = p.operatorSelector;
  return {
    name: 'keystone-appcred.operator',
    rules: [
      rule(
        'KeystoneAppCredTargetClusterDisconnected',
        'warning',
        'keystone_appcred_target_cluster_connected == 0',
        p.targetClusterFor,
        'Target cluster {{ $labels.cluster }} is disconnected from the operator',
        'The API server of the registered target cluster {{ $labels.cluster }} does not answer, or its kubeconfig cannot be used: its orders are not reconciled (their delivered Secrets stay as they are, and a rotation falls due without happening). ' +
          'The Events on its registration Secret say why: kubectl events -n <operator namespace> --for secret/{{ $labels.cluster }}.',
      ),
      rule(
        'KeystoneAppCredOperatorNoLeader',
        'critical',
        `(max by (job, namespace) (keystone_appcred_leader{${sel}}) < 1) or absent(keystone_appcred_leader{${sel}})`,
        p.noLeaderFor,
        'No replica of the keystone-appcred operator leads{{ with $labels.namespace }} in {{ . }}{{ end }}',
        'No operator replica holds the election Lease (or none is scraped): nothing is reconciled, no credential rotates or is repaired. ' +
          'kubectl get lease -n <operator namespace> keystone-appcred-operator-leader names the holder; the replicas\' logs say why they do not take it (the API server unreachable, the Lease Role missing).',
      ),
      rule(
        'KeystoneAppCredOperatorNotReady',
        'warning',
        `(min by (job, namespace, instance) (keystone_appcred_informer_synced{${sel}}) < 1) or (up{${sel}} == 0)`,
        p.notReadyOperatorFor,
        'The keystone-appcred operator replica {{ $labels.instance }} is not ready',
        'The replica {{ $labels.instance }} has caches that have not synced (its /readyz answers 503 and names them), or Prometheus cannot scrape it: a replica that is not ready cannot take over from the leader. ' +
          'Its log says which list fails (RBAC, the API server); see docs/troubleshoot/operator-start.md.',
      ),
      rule(
        'KeystoneAppCredOperatorMemoryNearLimit',
        'warning',
        `process_resident_memory_bytes{${sel}} / keystone_appcred_memory_limit_bytes{${sel}} > ${p.memoryRatio}`,
        p.memoryFor,
        'The keystone-appcred operator replica {{ $labels.instance }} uses {{ $value | humanizePercentage }} of its memory limit',
        `The resident memory of {{ $labels.instance }} has been above ${percent(p.memoryRatio)} of its container's memory limit for ${p.memoryFor}: the next burst (many new orders, a mass rotation) may get it OOM-killed. ` +
          'Raise the construct\'s limits.memory (docs/operate/what-to-do-when.md, "Sizing the memory limit": about 105 MiB plus 15 MiB per 1,000 orders, twice that for the limit).',
      ),
    ],
  };
}

const percent = (ratio: number): string => `${Math.round(ratio * 1000) / 10}%`;
