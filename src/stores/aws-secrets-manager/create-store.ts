import { PullSecretError } from '../../errors/index.js';
import type { StoreHooks } from '../factory.js';
import type { SecretStore } from '../store.js';
import { AwsSecretStore } from './aws-secret-store.js';
import { awsStoreConfigSchema, type AwsStoreConfig } from './config.js';
import { createAwsSdkClient, createStsClient } from './sdk-client.js';

/**
 * Builds the AWS Secrets Manager store (the SDK-heavy half of the descriptor). Validates the config
 * again (it may have been built by hand) and makes no network call: credentials are resolved on
 * the first request. The hook, when given, observes every request.
 *
 * @throws CONFIG_INVALID (as a rejection) when the config breaks a rule.
 */
export function createAwsStore(config: AwsStoreConfig, hooks: StoreHooks = {}): Promise<SecretStore> {
  const parsed = awsStoreConfigSchema.safeParse(
    hooks.onApiCall === undefined ? config : { ...config, onApiCall: hooks.onApiCall },
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`,
    );
    return Promise.reject(
      new PullSecretError('CONFIG_INVALID', `invalid AWS store configuration: ${problems.join('; ')}`),
    );
  }
  const valid = parsed.data;
  return Promise.resolve().then(
    () => new AwsSecretStore(createAwsSdkClient(valid), valid, createStsClient(valid)),
  );
}
