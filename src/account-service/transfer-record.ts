import { PullSecretError, toPullSecretError } from '../errors/index.js';
import { isObject } from '../pullsecret/validate.js';
import { parseStrictJson } from '../pullsecret/strict-json.js';
import { pushSecret } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';
import type { RetryPolicy } from '../util/retry.js';

/** The `resource-type` label of a transfer record (the cluster's secret has `pull-secret`). */
const TRANSFER_RECORD_RESOURCE_TYPE = 'pull-secret-transfer';

/**
 * What an applied ownership transfer left behind, kept durably beside the cluster's secret so a
 * later reconcile from the cluster spec merges it again (docs/account-service.md). `secret` is the
 * transferred pull secret as the account service gave it: a credential, so the record is a secret.
 */
interface AppliedTransfer {
  transferId: string;
  /** ISO 8601 time the transfer was applied. */
  appliedAt: string;
  /** The transferred pull secret JSON (never logged). */
  secret: string;
}

/** Id of the record beside a cluster's secret: `{secret id}-transfer`, e.g. `hyperfleet-{id}-pull-secret-transfer`. */
export function transferRecordId(secretId: string): string {
  return `${secretId}-transfer`;
}

/**
 * Reads the record beside `secretId`: one store access (`accessLatestEnabled` without the existence
 * check), so a cluster without a transfer costs exactly one extra call.
 * @returns `undefined` when no record exists.
 * @throws PullSecretError STORE_CORRUPT when the record does not hold an `AppliedTransfer` (message
 *   without its bytes), or what the store throws.
 */
export async function readTransferRecord(
  store: SecretStore,
  secretId: string,
  signal?: AbortSignal,
): Promise<AppliedTransfer | undefined> {
  const id = transferRecordId(secretId);
  let payload;
  try {
    payload = await store.accessLatestEnabled(id, { signal, skipExistenceCheck: true });
  } catch (err) {
    if (toPullSecretError(err).code === 'SECRET_NOT_FOUND') return undefined;
    throw err;
  }
  if (payload === undefined) return undefined;
  const parsed = parseStrictJson(payload.data.toString('utf8'));
  const value = parsed.ok ? parsed.value : undefined;
  if (
    !isObject(value) ||
    typeof value.transferId !== 'string' ||
    typeof value.appliedAt !== 'string' ||
    typeof value.secret !== 'string'
  ) {
    throw new PullSecretError(
      'STORE_CORRUPT',
      `transfer record ${id} version ${payload.version} is not a {transferId, appliedAt, secret} object`,
    );
  }
  return { transferId: value.transferId, appliedAt: value.appliedAt, secret: value.secret };
}

/**
 * Writes the record idempotently (`pushSecret`: a new version only when the content differs) with the
 * cluster's managed labels and `resource-type=pull-secret-transfer`.
 * @throws PullSecretError from `pushSecret` (SECRET_UNMANAGED for a foreign record, STORE_*).
 */
export async function writeTransferRecord(
  store: SecretStore,
  target: { secretId: string; labels: Readonly<Record<string, string>> },
  record: AppliedTransfer,
  options: { retry: RetryPolicy; signal?: AbortSignal },
): Promise<void> {
  const payload = Buffer.from(
    JSON.stringify({ transferId: record.transferId, appliedAt: record.appliedAt, secret: record.secret }),
    'utf8',
  );
  await pushSecret(
    store,
    {
      secretId: transferRecordId(target.secretId),
      labels: { ...target.labels, 'resource-type': TRANSFER_RECORD_RESOURCE_TYPE },
      payload,
    },
    options,
  );
}
