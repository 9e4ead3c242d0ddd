/**
 * Job mode's least privilege (docs/deployment.md, "RBAC"): the Jobs' service account writes the
 * cluster Secrets; the adapter's may only read and delete them (deploy/overlays/job). Ownership
 * transfers (`accountService`) and entitlement refreshes (`entitlements.enabled`) write the cluster's
 * Kubernetes Secret from the adapter process itself, which a real API server refuses there (403), so
 * the combination is refused at start instead of failing on every transfer or refresh.
 */
/** The sections the check reads. */
interface JobModeSections {
  execution: { mode: string };
  kubernetes: { target: string };
  accountService?: unknown;
  entitlements: { enabled: boolean };
}

export function jobModeGrantProblems(config: JobModeSections): string[] {
  if (config.execution.mode !== 'job' || config.kubernetes.target !== 'api') return [];
  const writers = [];
  if (config.accountService !== undefined) writers.push('accountService (ownership transfers)');
  if (config.entitlements.enabled) writers.push('entitlements.enabled');
  if (writers.length === 0) return [];
  const why = [
    `${writers.join(' and ')} cannot be used with execution.mode job and kubernetes.target api:`,
    "the adapter itself writes the cluster's Kubernetes Secret for them, and in Job mode its service account may not",
    "(only the Jobs' may, deploy/overlays/job); use execution.mode in-process, or kubernetes.target none",
  ];
  return [why.join(' ')];
}
