import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { STSClient } from '@aws-sdk/client-sts';
import { isLoopbackHost } from '../../util/loopback.js';
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
    requestHandler: {
      connectionTimeout: Math.min(config.callTimeoutMs, 10_000),
      requestTimeout: config.callTimeoutMs,
    },
  });
}

/**
 * The STS client that asks whose credentials these are (GetCallerIdentity) before the first write:
 * the regional endpoint of the store's region, the same default credential chain, no SDK retries.
 * The SDK's own AWS_ENDPOINT_URL_STS points it elsewhere (an STS VPC endpoint). Without it, a
 * loopback AWS_SECRETS_ENDPOINT (a local emulator or test server, which serve STS on the same port)
 * is used for STS too; a remote one (a Secrets Manager VPC endpoint) never is.
 */
export function createStsClient(config: AwsStoreConfig, env: NodeJS.ProcessEnv = process.env): STSClient {
  const endpoint = config.endpoint;
  const local =
    endpoint !== undefined &&
    isLoopbackHost(new URL(endpoint).hostname) &&
    (env.AWS_ENDPOINT_URL_STS ?? '') === '';
  return new STSClient({
    region: config.region,
    maxAttempts: 1,
    ...(local ? { endpoint } : {}),
    requestHandler: {
      connectionTimeout: Math.min(config.callTimeoutMs, 10_000),
      requestTimeout: config.callTimeoutMs,
    },
  });
}
