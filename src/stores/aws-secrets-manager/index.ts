/**
 * The AWS Secrets Manager store (`SECRET_STORE=aws`). Importing this module loads the SDK; the
 * registry imports `descriptor.ts` instead, which loads it on first use.
 */
export { awsStoreFactory } from './descriptor.js';
export { createAwsStore } from './create-store.js';
export { AwsSecretStore, RECOVERY_WINDOW_DAYS } from './aws-secret-store.js';
export {
  awsStoreConfigSchema,
  awsStoreEnv,
  awsLocation,
  AWS_PAYLOAD_LIMIT_BYTES,
  DEFAULT_AWS_CALL_TIMEOUT_MS,
  type AwsStoreConfig,
} from './config.js';
export { classifyAwsError, type AwsMethod } from './errors.js';
export { versionToken } from './names.js';
