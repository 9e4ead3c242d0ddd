/**
 * The one registry of error codes. Every error the service raises carries one of these codes;
 * callers decide what to do from `retryable` and `exitCode`, never from message text.
 *
 * `exitCode`: 2 for usage / configuration / input problems (fix the input, do not retry),
 * 1 for runtime failures.
 */
export const ERROR_CODES = {
  CONFIG_MISSING: { retryable: false, exitCode: 2 },
  CONFIG_INVALID: { retryable: false, exitCode: 2 },
  PULL_SECRET_INVALID: { retryable: false, exitCode: 2 },
  IDENTIFIER_INVALID: { retryable: false, exitCode: 2 },
  PAYLOAD_TOO_LARGE: { retryable: false, exitCode: 2 },
  SECRET_UNMANAGED: { retryable: false, exitCode: 1 },
  SECRET_NOT_FOUND: { retryable: false, exitCode: 1 },
  /** The target namespace does not exist yet (HyperShift creates it); worth retrying later. */
  NAMESPACE_NOT_FOUND: { retryable: true, exitCode: 1 },
  VERSION_NOT_ENABLED: { retryable: false, exitCode: 1 },
  VERIFY_MISMATCH: { retryable: false, exitCode: 1 },
  STORE_UNAVAILABLE: { retryable: true, exitCode: 1 },
  STORE_TIMEOUT: { retryable: true, exitCode: 1 },
  STORE_QUOTA_EXCEEDED: { retryable: true, exitCode: 1 },
  STORE_INTERNAL: { retryable: true, exitCode: 1 },
  STORE_CONFLICT: { retryable: true, exitCode: 1 },
  /** A compare-and-add lost: the newest version changed since it was read (re-read, decide again). */
  STORE_PRECONDITION_FAILED: { retryable: true, exitCode: 1 },
  STORE_PERMISSION_DENIED: { retryable: false, exitCode: 1 },
  STORE_UNAUTHENTICATED: { retryable: false, exitCode: 1 },
  STORE_INVALID_REQUEST: { retryable: false, exitCode: 1 },
  STORE_CORRUPT: { retryable: false, exitCode: 1 },
  STORE_FAILED: { retryable: false, exitCode: 1 },
  /** Kubernetes (API target, Job mode, manifest directory): its own family, so RBAC is never read as cloud IAM. */
  KUBE_UNAUTHENTICATED: { retryable: false, exitCode: 1 },
  /** HTTP 403 from the Kubernetes API: RBAC of the adapter's or the Job's service account. */
  KUBE_FORBIDDEN: { retryable: false, exitCode: 1 },
  KUBE_NOT_FOUND: { retryable: false, exitCode: 1 },
  /** HTTP 409, or an object that kept changing under optimistic concurrency; re-read and retry. */
  KUBE_CONFLICT: { retryable: true, exitCode: 1 },
  KUBE_INVALID_REQUEST: { retryable: false, exitCode: 1 },
  /** HTTP 429 from the API server (API Priority and Fairness). */
  KUBE_THROTTLED: { retryable: true, exitCode: 1 },
  KUBE_UNAVAILABLE: { retryable: true, exitCode: 1 },
  KUBE_TIMEOUT: { retryable: true, exitCode: 1 },
  /** The API server's certificate does not verify against the kubeconfig's CA. */
  KUBE_TLS_FAILED: { retryable: false, exitCode: 1 },
  /** Anything else from the Kubernetes client or the manifest directory; the message keeps the cause's text. */
  KUBE_FAILED: { retryable: false, exitCode: 1 },
  /** A broker message that is not a valid cluster CloudEvent: dead-lettered, never retried. */
  EVENT_INVALID: { retryable: false, exitCode: 1 },
  BROKER_UNAVAILABLE: { retryable: true, exitCode: 1 },
  /** HyperFleet API: 408/429/5xx or a network error. */
  API_UNAVAILABLE: { retryable: true, exitCode: 1 },
  /** HyperFleet API refused the request (400/409/422): a bug or a contract mismatch, not retried. */
  API_REQUEST_INVALID: { retryable: false, exitCode: 1 },
  API_UNAUTHENTICATED: { retryable: false, exitCode: 1 },
  /** Account service (transfers, pull secret source): 5xx, 408/429, timeout or network error. */
  ACCOUNT_SERVICE_UNAVAILABLE: { retryable: true, exitCode: 1 },
  /** Account service answered another 4xx (401/403: the cluster's or our credential); the message names the status. */
  ACCOUNT_SERVICE_REFUSED: { retryable: false, exitCode: 1 },
  /** Account service answered something its contract does not allow (not JSON, wrong shape, another cluster). */
  ACCOUNT_SERVICE_UNEXPECTED: { retryable: false, exitCode: 1 },
  /** The admin API refused the bearer token (401), or the token file cannot be used. */
  ADMIN_UNAUTHENTICATED: { retryable: false, exitCode: 1 },
  /** The admin API could not be reached or did not answer in time. */
  ADMIN_UNAVAILABLE: { retryable: true, exitCode: 1 },
  /** The admin API refused the request (403, 404, 429, 4xx) or failed it (5xx); the message says why. */
  ADMIN_REFUSED: { retryable: false, exitCode: 1 },
  PRECONDITION_ERROR: { retryable: false, exitCode: 1 },
  JOB_FAILED: { retryable: false, exitCode: 1 },
  /** A Kubernetes Job still runs when the caller stopped waiting; asking again later finds it. */
  JOB_IN_PROGRESS: { retryable: true, exitCode: 1 },
  /** Cleanup of a deleted cluster started but is not confirmed yet (e.g. a Job still terminating). */
  CLEANUP_PENDING: { retryable: true, exitCode: 1 },
  ABORTED: { retryable: false, exitCode: 1 },
  INTERNAL: { retryable: false, exitCode: 1 },
  /** A rollback to a version whose payload was destroyed (retention or by hand): nothing to go back to. */
  VERSION_DESTROYED: { retryable: false, exitCode: 1 },
  /** Registry verification (`enforce`): a registry answered 401/403 to the pull secret's credentials; not written. */
  CREDENTIALS_REJECTED: { retryable: false, exitCode: 1 },
  /** Registry verification (`enforce`): a registry gave no usable answer (network, timeout, 429, 5xx); retried. */
  REGISTRY_UNREACHABLE: { retryable: true, exitCode: 1 },
} as const satisfies Record<string, { retryable: boolean; exitCode: 1 | 2 }>;

export type ErrorCode = keyof typeof ERROR_CODES;
