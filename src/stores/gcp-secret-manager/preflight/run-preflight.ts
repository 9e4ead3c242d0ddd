import { PullSecretError } from '../../../errors/index.js';
import { apiFailure, apiReachable, type ApiCheckContext } from './api-check.js';
import { checkCredentials, type CredentialsContext } from './credentials-check.js';
import { REQUIRED_PERMISSIONS } from './permissions.js';
import { permissionChecks, type PermissionEvidence } from './permissions-check.js';
import type { CheckResult, PreflightReport } from './types.js';

/** The Secret Manager calls preflight makes; `GcpSecretStore` provides them. */
export interface PreflightProbe {
  secretPath(secretId: string): string;
  testIamPermissions(
    permissions: readonly string[],
    options: { secretId: string; signal?: AbortSignal },
  ): Promise<string[]>;
  getSecret(secretId: string, options?: { signal?: AbortSignal }): Promise<unknown>;
}

/** Everything one run needs besides the probe. */
export interface PreflightInput
  extends Omit<CredentialsContext, 'insecure'>, Omit<ApiCheckContext, 'inKubernetes'> {
  insecure: boolean;
  /** Secret the permissions are tested on (an existing one gives an exact answer). */
  secretId: string;
  signal?: AbortSignal;
}

function skipped(id: string, title: string, why: string): CheckResult {
  return { id, title, status: 'skip', detail: why, fix: [] };
}

async function probeSecret(
  probe: PreflightProbe,
  input: PreflightInput,
): Promise<PermissionEvidence['probe']> {
  try {
    return (await probe.getSecret(input.secretId, { signal: input.signal })) === undefined
      ? 'missing'
      : 'exists';
  } catch (err) {
    if (err instanceof PullSecretError && err.code === 'STORE_PERMISSION_DENIED') return 'denied';
    throw err;
  }
}

/**
 * Checks a customer project before its first cluster: credentials found (no network), the Secret
 * Manager API reachable with them (one TestIamPermissions call), and the four permissions it needs
 * granted. At most two calls; nothing is written. Later checks are skipped once one they
 * depend on failed.
 *
 * @throws ABORTED when `signal` aborts; any other failure becomes a failed check.
 */
export async function runPreflight(
  input: PreflightInput,
  openProbe: () => Promise<PreflightProbe>,
): Promise<PreflightReport> {
  const inKubernetes = (input.env.KUBERNETES_SERVICE_HOST ?? '') !== '';
  const checks: CheckResult[] = [await checkCredentials(input)];
  let resource = `projects/${input.project}/secrets/${input.secretId}`;
  const skipPermissions = (why: string) =>
    REQUIRED_PERMISSIONS.map((p) => skipped(`permission:${p}`, `permission ${p}`, why));

  if (checks[0]?.status === 'fail') {
    checks.push(
      skipped('api', 'Secret Manager API', 'needs credentials'),
      ...skipPermissions('needs credentials'),
    );
  } else {
    const probe = await openProbe();
    resource = probe.secretPath(input.secretId);
    let granted: string[] | undefined;
    try {
      granted = await probe.testIamPermissions(REQUIRED_PERMISSIONS, {
        secretId: input.secretId,
        signal: input.signal,
      });
      checks.push(apiReachable(input));
    } catch (err) {
      if (input.signal?.aborted) throw err;
      checks.push(
        apiFailure(err, { ...input, inKubernetes }),
        ...skipPermissions('needs the Secret Manager API'),
      );
    }
    if (granted !== undefined) {
      let evidence: PermissionEvidence = {
        project: input.project,
        serviceAccount: input.serviceAccount,
        resource,
        granted,
      };
      if (granted.length === 0) {
        try {
          evidence = { ...evidence, probe: await probeSecret(probe, input) };
        } catch (err) {
          if (input.signal?.aborted) throw err;
        }
      }
      checks.push(...permissionChecks(evidence));
    }
  }
  return {
    project: input.project,
    serviceAccount: input.serviceAccount,
    resource,
    checks,
    ok: checks.every((c) => c.status !== 'fail'),
  };
}
