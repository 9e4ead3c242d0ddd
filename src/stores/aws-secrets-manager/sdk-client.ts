import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsStoreConfig } from './config.js';

/**
 * The Secrets Manager client of one account and region. Credentials come from the SDK's default
 * provider chain (environment, web identity / IRSA, EKS Pod Identity, shared config, instance
 * metadata), never from our settings. The SDK's retries are off (`maxAttempts: 1`): the caller
 * retries each step itself, and a write is never repeated behind its back. No network call here.
 */
export function createAwsSdkClient(config: AwsStoreConfig): SecretsManagerClient {
  return new SecretsManagerClient({
    region: config.region,
    maxAttempts: 1,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    requestHandler: { connectionTimeout: Math.min(config.callTimeoutMs, 10_000), requestTimeout: config.callTimeoutMs },
  });
}
