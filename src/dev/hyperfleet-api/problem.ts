import { randomBytes } from 'node:crypto';
import type { ProblemDetails, ValidationError } from '../../hyperfleet/types.js';

/**
 * The problem kinds the stand-in answers with, in the API's RFC 9457 style: `HYPERFLEET-{CAT}-{NUM}`
 * codes as the contract's examples and the real API use them (VAL 400, AUT 401, NTF 404, CNF 409,
 * LMT 429, INT 500, SVC 503).
 */
export const PROBLEMS = {
  validation: {
    status: 400,
    code: 'HYPERFLEET-VAL-000',
    title: 'Validation Failed',
    type: 'validation-error',
  },
  // hyperfleet-api pkg/errors/errors.go `CodeValidationFormat`, `CodeValidationRange` (list parameters).
  format: { status: 400, code: 'HYPERFLEET-VAL-003', title: 'Invalid Format', type: 'validation-error' },
  range: { status: 400, code: 'HYPERFLEET-VAL-004', title: 'Value Out of Range', type: 'validation-error' },
  badRequest: { status: 400, code: 'HYPERFLEET-VAL-005', title: 'Bad Request', type: 'bad-request' },
  malformed: {
    status: 400,
    code: 'HYPERFLEET-VAL-006',
    title: 'Malformed Request',
    type: 'malformed-request',
  },
  search: {
    status: 400,
    code: 'HYPERFLEET-VAL-007',
    title: 'Invalid Search Query',
    type: 'validation-error',
  },
  unauthenticated: {
    status: 401,
    code: 'HYPERFLEET-AUT-001',
    title: 'Authentication Required',
    type: 'authentication-error',
  },
  invalidCredentials: {
    status: 401,
    code: 'HYPERFLEET-AUT-002',
    title: 'Invalid Credentials',
    type: 'authentication-error',
  },
  notFound: { status: 404, code: 'HYPERFLEET-NTF-001', title: 'Resource Not Found', type: 'not-found' },
  routeNotFound: {
    status: 404,
    code: 'HYPERFLEET-NTF-000',
    title: 'Endpoint Not Found',
    type: 'endpoint-not-found',
  },
  methodNotAllowed: {
    status: 405,
    code: 'HYPERFLEET-VAL-005',
    title: 'Method Not Allowed',
    type: 'bad-request',
  },
  conflict: { status: 409, code: 'HYPERFLEET-CNF-001', title: 'Resource Conflict', type: 'conflict' },
  payloadTooLarge: {
    status: 413,
    code: 'HYPERFLEET-VAL-006',
    title: 'Payload Too Large',
    type: 'malformed-request',
  },
  unsupportedMediaType: {
    status: 415,
    code: 'HYPERFLEET-VAL-006',
    title: 'Unsupported Media Type',
    type: 'malformed-request',
  },
  internal: {
    status: 500,
    code: 'HYPERFLEET-INT-001',
    title: 'Internal Server Error',
    type: 'internal-error',
  },
  database: { status: 500, code: 'HYPERFLEET-INT-002', title: 'Database Error', type: 'internal-error' },
  notImplemented: {
    status: 501,
    code: 'HYPERFLEET-INT-003',
    title: 'Not Implemented',
    type: 'not-implemented',
  },
  unavailable: {
    status: 503,
    code: 'HYPERFLEET-SVC-001',
    title: 'Service Unavailable',
    type: 'service-unavailable',
  },
} as const;

export type ProblemKind = keyof typeof PROBLEMS;

/** An error a handler throws to answer with problem details. */
export class ProblemError extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors: ValidationError[] = [],
    /** Extra response headers, e.g. `allow` on a 405. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
  }
}

/** RFC 3986 characters only, so `instance` is always a valid `uri-reference`. */
const URI_REFERENCE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;

/** A problem+json body; `instance` is the request path when it is a clean URI reference. */
export function problemBody(
  kind: ProblemKind,
  detail: string,
  instance: string,
  now: Date,
  errors: ValidationError[] = [],
): ProblemDetails {
  const { status, code, title, type } = PROBLEMS[kind];
  return {
    type: `https://api.hyperfleet.io/errors/${type}`,
    title,
    status,
    detail,
    ...(URI_REFERENCE.test(instance) ? { instance } : {}),
    code,
    timestamp: now.toISOString(),
    trace_id: randomBytes(8).toString('hex'),
    ...(errors.length > 0 ? { errors } : {}),
  };
}

/** The problem kind for an injected HTTP status (a fault), so injected answers look like the API's own. */
export function kindForStatus(status: number): ProblemKind {
  if (status === 429 || status === 408) return 'unavailable';
  if (status === 500) return 'internal';
  if (status === 501) return 'notImplemented';
  if (status >= 500) return 'unavailable';
  if (status === 401) return 'unauthenticated';
  if (status === 404) return 'notFound';
  if (status === 409) return 'conflict';
  return 'badRequest';
}
