/**
 * The AWS store's version lifecycle for retention (docs/retention.md): retiring a superseded
 * version by removing AWSPREVIOUS, and giving it back for a rollback. Secrets Manager has no
 * per-version delete; it removes versions without a staging label itself.
 */
import { PullSecretError } from '../../errors/index.js';
import type { CallOptions, SecretVersionInfo } from '../store.js';
import { assertAwsVersionId } from './names.js';
import { CURRENT, PREVIOUS, type SecretsManagerApi } from './secrets-manager-api.js';

/** `AwsSecretStore.disableVersion` (its TSDoc says the contract). */
export async function retireAwsVersion(
  api: SecretsManagerApi,
  secretId: string,
  version: string,
  options?: CallOptions,
): Promise<SecretVersionInfo> {
  const path = api.checkedPath(secretId);
  assertAwsVersionId(version);
  const { found } = await api.findVersion(secretId, path, version, options);
  if (found.stages.includes(CURRENT)) {
    throw new PullSecretError(
      'STORE_INVALID_REQUEST',
      `AWS Secrets Manager version ${api.versionPath(path, version)} is AWSCURRENT, the version in use; ` +
        'refusing to retire it (make another version current first)',
    );
  }
  if (!found.stages.includes(PREVIOUS)) return api.toVersionInfo(path, found);
  const moved = await api.moveStage(secretId, path, PREVIOUS, { RemoveFromVersionId: version }, options);
  // Refused: AWSPREVIOUS moved meanwhile (a concurrent push moved AWSCURRENT): read where the version
  // stands now.
  if (!moved) return api.toVersionInfo(path, (await api.findVersion(secretId, path, version, options)).found);
  return api.toVersionInfo(path, { ...found, stages: found.stages.filter((s) => s !== PREVIOUS) });
}

/** `AwsSecretStore.enableVersion` (its TSDoc says the contract). */
export async function restoreAwsVersion(
  api: SecretsManagerApi,
  secretId: string,
  version: string,
  options?: CallOptions,
): Promise<SecretVersionInfo> {
  const path = api.checkedPath(secretId);
  assertAwsVersionId(version);
  const { found, listed } = await api.findVersion(secretId, path, version, options);
  if (found.stages.length > 0) return api.toVersionInfo(path, found);
  const holder = listed.find((v) => v.stages.includes(PREVIOUS));
  const moved = await api.moveStage(
    secretId,
    path,
    PREVIOUS,
    { MoveToVersionId: version, ...(holder === undefined ? {} : { RemoveFromVersionId: holder.id }) },
    options,
  );
  if (!moved)
    throw new PullSecretError(
      'STORE_CONFLICT',
      `AWS Secrets Manager secret ${path}: AWSPREVIOUS moved while version ${version} was being enabled; ` +
        're-reading',
    );
  return api.toVersionInfo(path, { ...found, stages: [PREVIOUS] });
}
