import type { ErrorCode } from './codes.js';

/**
 * PascalCase reasons (as HyperFleet status conditions use) for failures, shared by the job's result
 * file and the adapter's status conditions, so an operator sees the same word everywhere.
 */
const REASONS: Partial<Record<ErrorCode, string>> = {
  CONFIG_MISSING: 'InvalidConfiguration',
  CONFIG_INVALID: 'InvalidConfiguration',
  IDENTIFIER_INVALID: 'InvalidConfiguration',
  PULL_SECRET_INVALID: 'InvalidPullSecret',
  PAYLOAD_TOO_LARGE: 'InvalidPullSecret',
  SECRET_UNMANAGED: 'SecretNotManaged',
  NAMESPACE_NOT_FOUND: 'NamespaceNotFound',
  /** Cloud IAM (Secret Manager); Kubernetes RBAC is KubernetesForbidden. */
  STORE_PERMISSION_DENIED: 'PermissionDenied',
  STORE_UNAUTHENTICATED: 'AuthenticationFailed',
  STORE_QUOTA_EXCEEDED: 'QuotaExceeded',
  STORE_UNAVAILABLE: 'StoreUnavailable',
  STORE_TIMEOUT: 'StoreUnavailable',
  STORE_INTERNAL: 'StoreUnavailable',
  KUBE_UNAUTHENTICATED: 'KubernetesAuthenticationFailed',
  KUBE_FORBIDDEN: 'KubernetesForbidden',
  KUBE_NOT_FOUND: 'KubernetesNotFound',
  KUBE_CONFLICT: 'KubernetesConflict',
  KUBE_INVALID_REQUEST: 'KubernetesRequestInvalid',
  KUBE_THROTTLED: 'KubernetesThrottled',
  KUBE_UNAVAILABLE: 'KubernetesUnavailable',
  KUBE_TIMEOUT: 'KubernetesUnavailable',
  KUBE_TLS_FAILED: 'KubernetesTlsFailed',
  KUBE_FAILED: 'KubernetesFailed',
  VERIFY_MISMATCH: 'VerificationFailed',
  STORE_CORRUPT: 'StoreCorrupt',
  STORE_FAILED: 'StoreFailed',
  EVENT_INVALID: 'InvalidEvent',
  API_UNAVAILABLE: 'ApiUnavailable',
  API_REQUEST_INVALID: 'ApiRequestInvalid',
  API_UNAUTHENTICATED: 'AuthenticationFailed',
  ACCOUNT_SERVICE_UNAVAILABLE: 'AccountServiceUnavailable',
  ACCOUNT_SERVICE_REFUSED: 'AccountServiceRefused',
  ACCOUNT_SERVICE_UNEXPECTED: 'AccountServiceUnexpectedAnswer',
  PRECONDITION_ERROR: 'PreconditionError',
  JOB_FAILED: 'JobFailed',
  JOB_IN_PROGRESS: 'JobInProgress',
  CLEANUP_PENDING: 'CleanupPending',
  CREDENTIALS_REJECTED: 'CredentialsRejected',
  REGISTRY_UNREACHABLE: 'RegistryUnreachable',
};

/** The failure reason for an error code; `JobFailed` when none is more specific. */
export function failureReason(code: ErrorCode): string {
  return REASONS[code] ?? 'JobFailed';
}
