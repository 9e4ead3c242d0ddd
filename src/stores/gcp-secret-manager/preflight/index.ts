/** `pull-secret preflight`: checks a customer project before its first cluster. */
export { runPreflight, type PreflightInput, type PreflightProbe } from './run-preflight.js';
export { formatReport, reportJson } from './report.js';
export {
  REQUIRED_PERMISSIONS,
  PERMISSION_ROLES,
  PROBE_SECRET_ID,
  type RequiredPermission,
} from './permissions.js';
export * as gcloud from './gcloud-commands.js';
export type { CheckResult, CheckStatus, PreflightReport } from './types.js';
