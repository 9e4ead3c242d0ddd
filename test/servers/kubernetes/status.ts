/**
 * Kubernetes `Status` failure bodies, shaped like the API server's (metav1.Status), and the error
 * type handlers throw to answer with one.
 */

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Thrown inside the server to answer with a Status body and its HTTP code. */
export class StatusError extends Error {
  readonly body: StatusBody;

  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.body = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
    if (details !== undefined) this.body.details = details;
  }

  get code(): number {
    return this.body.code;
  }
}

/** The resource a Status names: plural resource and API group ('' for core). */
export interface Target {
  resource: string;
  group: string;
  name: string;
}

function qualified(t: Target): string {
  return t.group === '' ? t.resource : `${t.resource}.${t.group}`;
}

export function notFound(t: Target): StatusError {
  return new StatusError(404, 'NotFound', `${qualified(t)} "${t.name}" not found`, {
    name: t.name,
    group: t.group || undefined,
    kind: t.resource,
  });
}

export function alreadyExists(t: Target): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualified(t)} "${t.name}" already exists`, {
    name: t.name,
    group: t.group || undefined,
    kind: t.resource,
  });
}

/** The optimistic-concurrency conflict the API server returns for a stale resourceVersion. */
export function conflict(
  t: Target,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(t)} "${t.name}": ${why}`,
    {
      name: t.name,
      group: t.group || undefined,
      kind: t.resource,
    },
  );
}

/** 422 Invalid: `kind` is the object kind (e.g. `Secret`), causes list each failed field. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): StatusError {
  const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = text.length === 1 ? (text[0] ?? '') : `[${text.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
    name,
    group: group || undefined,
    kind,
    causes,
  });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function unauthorized(): StatusError {
  return new StatusError(401, 'Unauthorized', 'Unauthorized');
}

export function forbidden(verb: string, t: Target, namespace?: string): StatusError {
  const scope = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
  return new StatusError(
    403,
    'Forbidden',
    `${qualified(t)} "${t.name}" is forbidden: User "system:serviceaccount:test:client" cannot ${verb} resource "${t.resource}" in API group "${t.group}" ${scope}`,
    {
      name: t.name,
      group: t.group || undefined,
      kind: t.resource,
    },
  );
}

/**
 * A create in a namespace being deleted, as the NamespaceLifecycle admission plugin refuses it
 * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go):
 * 403 Forbidden naming the resource, with a `NamespaceTerminating` cause on `metadata.namespace`.
 */
export function namespaceTerminating(t: Target, namespace: string): StatusError {
  return new StatusError(
    403,
    'Forbidden',
    `${qualified(t)} "${t.name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    {
      name: t.name,
      group: t.group || undefined,
      kind: t.resource,
      causes: [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ],
    },
  );
}

export function methodNotAllowed(method: string): StatusError {
  return new StatusError(
    405,
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource (${method})`,
  );
}

export function unsupportedMediaType(contentType: string): StatusError {
  return new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got ${contentType})`,
  );
}

export function tooManyRequests(): StatusError {
  return new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', {
    retryAfterSeconds: 1,
  });
}

export function internalError(
  message = 'an error on the server ("injected fault") has prevented the request from succeeding',
): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`);
}

export function serviceUnavailable(): StatusError {
  return new StatusError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request');
}

export function gone(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

/** A Status for an arbitrary injected code, with the reason the API server uses for it. */
export function statusForCode(code: number, t: Target, verb: string, namespace?: string): StatusError {
  switch (code) {
    case 401:
      return unauthorized();
    case 403:
      return forbidden(verb, t, namespace);
    case 404:
      return notFound(t);
    case 409:
      return conflict(t);
    case 422:
      return invalid(t.resource, t.group, t.name, [
        { reason: 'FieldValueInvalid', message: 'Invalid value: injected fault', field: 'metadata.name' },
      ]);
    case 429:
      return tooManyRequests();
    case 500:
      return internalError();
    case 503:
      return serviceUnavailable();
    case 504:
      return new StatusError(
        504,
        'Timeout',
        'the server was unable to return a response in the time allotted, but may still be processing the request',
      );
    default:
      return new StatusError(code, 'Unknown', `injected fault ${code}`);
  }
}

/** A Success Status, as returned by DELETE. */
export function success(details: StatusDetails): Omit<StatusBody, 'message' | 'reason' | 'code'> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
