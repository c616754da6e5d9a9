export { ALERT_DEFAULTS, ALERT_PARAMETER_HELP, DOCS_URL, resolveAlertParameters, seconds, type AlertParameters } from './alert-parameters';
export { ALERT_NAMES, runbookAnchor, type AlertGroup, type AlertName, type AlertRule, type RuleFile } from './alert-rule';
export * from './alerts';
export { NEEDS_ACTION_REASONS } from './credential-alerts';
export * from './dashboard';
