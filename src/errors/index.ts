export { ERROR_CODES, type ErrorCode } from './codes.js';
export { PullSecretError, isRetryable, toPullSecretError, describeError } from './pull-secret-error.js';
export { failureReason } from './reasons.js';
export { trimServerText } from './server-text.js';
