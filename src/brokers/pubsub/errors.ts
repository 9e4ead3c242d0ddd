import { Status } from 'google-gax';
import { PullSecretError } from '../../errors/index.js';

/** gRPC status codes the Pub/Sub client reports (google.rpc.Code, as gax names them). */
export { Status };

/** Codes that mean the settings or permissions are wrong: retrying will not help. */
const CONFIG_CODES: ReadonlySet<number> = new Set([
  Status.INVALID_ARGUMENT,
  Status.NOT_FOUND,
  Status.PERMISSION_DENIED,
  Status.FAILED_PRECONDITION,
  Status.UNAUTHENTICATED,
]);

/** The gRPC status code of an error from the client library, if it has one. */
export function grpcCode(err: unknown): number | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Turns a Pub/Sub client error into a PullSecretError: CONFIG_INVALID for a refused request (bad
 * names, missing resources, permissions, credentials), else BROKER_UNAVAILABLE. `what` says what was
 * attempted, e.g. `creating subscription "x"`; the client's own text is kept only as the cause.
 */
export function classifyPubSubError(err: unknown, what: string): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const code = grpcCode(err);
  if (code !== undefined && CONFIG_CODES.has(code)) {
    return new PullSecretError(
      'CONFIG_INVALID',
      `Pub/Sub refused ${what} (gRPC status ${code}): check the project, names and permissions`,
      { cause: err },
    );
  }
  return new PullSecretError(
    'BROKER_UNAVAILABLE',
    `Pub/Sub is unavailable while ${what}${code === undefined ? '' : ` (gRPC status ${code})`}`,
    { cause: err },
  );
}
