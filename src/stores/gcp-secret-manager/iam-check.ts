/**
 * TestIamPermissions for the GCP store: which permissions the caller holds on a secret, and a clear
 * refusal when the call itself is refused (the preflight's probe: preflight/run-preflight.ts).
 */
import type { SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { PullSecretError } from '../../errors/index.js';
import { callExpecting, type ApiCallOptions } from './api-call.js';
import { serverDetail, type GcpMethod } from './errors.js';

/** `GcpSecretStore.testIamPermissions` on the secret path `resource` (its TSDoc says the contract). */
export async function testGcpIamPermissions(
  client: SecretManagerServiceClient,
  resource: string,
  permissions: readonly string[],
  options: ApiCallOptions,
): Promise<string[]> {
  // `GcpMethod` names the RPCs that need a permission; this one needs none, so PERMISSION_DENIED is
  // answered here rather than by the classifier's per-method advice.
  const target = { method: 'TestIamPermissions' as string as GcpMethod, resource };
  let refusal: unknown;
  const result = await callExpecting(target, options, ['PERMISSION_DENIED'], (o) =>
    client.testIamPermissions({ resource, permissions: [...permissions] }, o).catch((err: unknown) => {
      refusal = err;
      throw err;
    }),
  );
  if (result.ok) return [...(result.value[0].permissions ?? [])];
  // Bounded printable ASCII: the server's text can neither flood nor forge a line.
  const detail = serverDetail(refusal) ?? '';
  throw new PullSecretError(
    'STORE_PERMISSION_DENIED',
    `GCP Secret Manager TestIamPermissions failed for ${resource}: ` +
      `PERMISSION_DENIED${detail === '' ? '' : ` (${detail})`}. ` +
      'The Secret Manager API may be disabled in the project, or the project does not exist.',
    { cause: refusal },
  );
}
