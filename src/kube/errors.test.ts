import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { redactor } from '../pullsecret/redact.js';
import { classifyKubeError, classifyManifestFsError } from './errors.js';

const OP = { verb: 'update', kind: 'Secret', namespace: 'clusters-a', name: 'a-pull-secret' };

function apiError(code: number, reason: string, message = 'server text'): ApiException<string> {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    reason,
    code,
    details: { causes: [{ field: 'data[.dockerconfigjson]', message }] },
  });
  return new ApiException(code, 'Unknown API Status Code!', body, {});
}

describe('classifyKubeError', () => {
  const table: [number, string, string, boolean][] = [
    [401, 'Unauthorized', 'KUBE_UNAUTHENTICATED', false],
    [403, 'Forbidden', 'KUBE_FORBIDDEN', false],
    [404, 'NotFound', 'KUBE_NOT_FOUND', false],
    [409, 'Conflict', 'KUBE_CONFLICT', true],
    [422, 'Invalid', 'KUBE_INVALID_REQUEST', false],
    [400, 'BadRequest', 'KUBE_INVALID_REQUEST', false],
    [429, 'TooManyRequests', 'KUBE_THROTTLED', true],
    [500, 'InternalError', 'KUBE_UNAVAILABLE', true],
    [503, 'ServiceUnavailable', 'KUBE_UNAVAILABLE', true],
    [504, 'Timeout', 'KUBE_TIMEOUT', true],
  ];
  for (const [status, reason, code, retryable] of table) {
    it(`maps HTTP ${status} to ${code}`, () => {
      const err = classifyKubeError(apiError(status, reason), OP);
      assert.equal(err.code, code);
      assert.equal(err.retryable, retryable);
      assert.match(err.message, new RegExp(`HTTP ${status} ${reason}`));
    });
  }

  it('reads the 403 of a create in a Terminating namespace as the namespace going, not RBAC', () => {
    const body = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message:
        'secrets "a-pull-secret" is forbidden: unable to create new content in namespace clusters-a because it is being terminated',
      reason: 'Forbidden',
      code: 403,
      details: {
        name: 'a-pull-secret',
        kind: 'secrets',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace clusters-a is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
    };
    const err = classifyKubeError(new ApiException(403, 'Forbidden', JSON.stringify(body), {}), {
      ...OP,
      verb: 'create',
    });
    assert.equal(err.code, 'NAMESPACE_NOT_FOUND');
    assert.equal(err.retryable, true);
    assert.match(err.message, /namespace "?clusters-a"? is being deleted \(Terminating\)/);
  });

  it('names fields but never repeats the server message', () => {
    const err = classifyKubeError(apiError(422, 'Invalid', 'Invalid value: "dXNlcjpwYXNz"'), OP);
    assert.match(err.message, /data\[\.dockerconfigjson\]/);
    assert.doesNotMatch(err.message, /dXNlcjpwYXNz/);
    assert.match(err.message, /clusters-a\/a-pull-secret/);
  });

  it('maps socket errors to retryable KUBE_UNAVAILABLE', () => {
    const err = classifyKubeError(
      Object.assign(new Error('request to https://x failed, reason: connect ECONNREFUSED'), {
        name: 'FetchError',
        code: 'ECONNREFUSED',
      }),
      OP,
    );
    assert.equal(err.code, 'KUBE_UNAVAILABLE');
    assert.equal(err.retryable, true);
    assert.match(err.message, /ECONNREFUSED/);
  });

  it('maps TLS verification failures to a permanent error', () => {
    const err = classifyKubeError(
      Object.assign(new Error('self-signed'), { name: 'FetchError', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      OP,
    );
    assert.equal(err.code, 'KUBE_TLS_FAILED');
    assert.equal(err.retryable, false);
  });

  it("maps aborts, and keeps an unknown error's own message, redacted and trimmed", () => {
    assert.equal(
      classifyKubeError(Object.assign(new Error('aborted'), { name: 'AbortError' }), OP).code,
      'ABORTED',
    );
    const release = redactor.register(['hunter2-secret']);
    try {
      const unknown = classifyKubeError(
        new TypeError(`Invalid URL: token hunter2-secret\nforged line ${'x'.repeat(500)}`),
        OP,
      );
      assert.equal(unknown.code, 'KUBE_FAILED');
      assert.match(
        unknown.message,
        /^Kubernetes client failed during update of Secret "clusters-a\/a-pull-secret": Invalid URL: token \[REDACTED\] forged line x+…$/,
      );
      assert.ok(unknown.message.length < 320, unknown.message);
    } finally {
      release();
    }
  });
});

describe('classifyManifestFsError', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: failed, write '/m/ns/x.yaml'`), { code });

  it('a full disk or quota under the manifest directory is retryable, as in the local store', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE']) {
      const err = classifyManifestFsError(errno(code), 'write', '/m/ns/x.yaml');
      assert.equal(err.code, 'KUBE_UNAVAILABLE', code);
      assert.equal(err.retryable, true, code);
    }
    assert.equal(
      classifyManifestFsError(errno('ENOSPC'), 'write', '/m/ns/x.yaml').message,
      'cannot write manifest "/m/ns/x.yaml": ENOSPC (no space left on the device; retried)',
    );
  });

  it('a path or permission problem stays permanent', () => {
    for (const code of ['EACCES', 'ENOTDIR', 'EROFS']) {
      const err = classifyManifestFsError(errno(code), 'write', '/m/ns/x.yaml');
      assert.equal(err.code, 'KUBE_FAILED', code);
      assert.equal(err.message, `cannot write manifest "/m/ns/x.yaml": ${code}`);
    }
    assert.equal(
      classifyManifestFsError(new Error('odd'), 'read', '/m/x').message,
      'cannot read manifest "/m/x": unknown error',
    );
  });
});
