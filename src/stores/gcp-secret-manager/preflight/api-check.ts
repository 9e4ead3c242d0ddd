import { PullSecretError, toPullSecretError } from '../../../errors/index.js';
import {
  adcLoginCommand,
  enableApiCommand,
  workloadIdentityBindingCommand,
  type KubernetesServiceAccount,
} from './gcloud-commands.js';
import type { CheckResult } from './types.js';

/** What the API check needs to phrase its fixes. */
export interface ApiCheckContext {
  project: string;
  serviceAccount: string;
  workloadPool: string;
  kubernetesServiceAccount: KubernetesServiceAccount;
  /** `host:port` the calls go to, for the message. */
  endpoint: string;
  /** Running inside Kubernetes: a credentials failure is a Workload Identity problem there. */
  inKubernetes: boolean;
}

function result(status: CheckResult['status'], detail: string, fix: string[] = []): CheckResult {
  return { id: 'api', title: 'Secret Manager API', status, detail, fix };
}

/** The passing API check: a TestIamPermissions call came back. */
export function apiReachable(ctx: Pick<ApiCheckContext, 'endpoint'>): CheckResult {
  return result('pass', `reachable at ${ctx.endpoint} with the credentials above`);
}

/**
 * Turns the failure of the first Secret Manager call into the API check, with the fix for its
 * cause: unreachable endpoint or disabled API, rejected credentials, refused call. Never throws.
 */
export function apiFailure(err: unknown, ctx: ApiCheckContext): CheckResult {
  const error = err instanceof PullSecretError ? err : toPullSecretError(err);
  switch (error.code) {
    case 'STORE_UNAVAILABLE':
    case 'STORE_TIMEOUT':
      return result('fail', `cannot reach Secret Manager at ${ctx.endpoint}: ${error.message}`, [
        enableApiCommand(ctx.project),
        `# and check that this network can reach ${ctx.endpoint} (egress firewall, proxy, private service connect)`,
      ]);
    case 'STORE_UNAUTHENTICATED':
      return result('fail', `the credentials were missing or rejected: ${error.message}`, [
        ctx.inKubernetes
          ? workloadIdentityBindingCommand(ctx.serviceAccount, ctx.workloadPool, ctx.kubernetesServiceAccount)
          : adcLoginCommand(ctx.serviceAccount),
      ]);
    case 'STORE_PERMISSION_DENIED':
      return result('fail', error.message, [enableApiCommand(ctx.project)]);
    case 'STORE_QUOTA_EXCEEDED':
      return result('fail', `Secret Manager quota exhausted: ${error.message}`, [
        `# wait a minute and run preflight again; see docs/runbook.md (PullSecretGcpQuotaExceeded)`,
      ]);
    default:
      return result('fail', error.message);
  }
}
