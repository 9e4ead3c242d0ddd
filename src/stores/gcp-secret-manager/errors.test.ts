import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Status } from 'google-gax';
import { PullSecretError } from '../../errors/index.js';
import { abortedError, classifyGcpError, grpcCodeName, type CallTarget } from './errors.js';

const TARGET: CallTarget = {
  method: 'AccessSecretVersion',
  resource: 'projects/p/secrets/s/versions/latest',
};

/** An error shaped like gax's GoogleError / grpc-js ServiceError. */
function grpcError(code: number, details: string): Error {
  const name = Status[code];
  return Object.assign(new Error(`${code} ${name}: ${details}`), { code, details });
}

test('gRPC codes map onto the error registry with the right retryability', () => {
  const table: [number, string, boolean][] = [
    [Status.UNAVAILABLE, 'STORE_UNAVAILABLE', true],
    [Status.DEADLINE_EXCEEDED, 'STORE_TIMEOUT', true],
    [Status.RESOURCE_EXHAUSTED, 'STORE_QUOTA_EXCEEDED', true],
    [Status.INTERNAL, 'STORE_INTERNAL', true],
    [Status.UNKNOWN, 'STORE_INTERNAL', true],
    [Status.ABORTED, 'STORE_CONFLICT', true],
    [Status.ALREADY_EXISTS, 'STORE_CONFLICT', true],
    [Status.CANCELLED, 'STORE_UNAVAILABLE', true],
    [Status.PERMISSION_DENIED, 'STORE_PERMISSION_DENIED', false],
    [Status.UNAUTHENTICATED, 'STORE_UNAUTHENTICATED', false],
    [Status.INVALID_ARGUMENT, 'STORE_INVALID_REQUEST', false],
    [Status.NOT_FOUND, 'SECRET_NOT_FOUND', false],
    [Status.FAILED_PRECONDITION, 'VERSION_NOT_ENABLED', false],
    [Status.UNIMPLEMENTED, 'STORE_FAILED', false],
    [Status.OUT_OF_RANGE, 'STORE_FAILED', false],
    [Status.DATA_LOSS, 'STORE_FAILED', false],
  ];
  for (const [code, expected, retryable] of table) {
    const err = classifyGcpError(grpcError(code, 'detail'), TARGET);
    assert.ok(err instanceof PullSecretError);
    assert.equal(err.code, expected, `code ${code}`);
    assert.equal(err.retryable, retryable, `code ${code}`);
    assert.match(
      err.message,
      new RegExp(
        `^GCP Secret Manager AccessSecretVersion failed for projects/p/secrets/s/versions/latest: ${grpcCodeName({ code })} \\(detail\\)\\. `,
      ),
    );
  }
});

test('UNKNOWN carrying a socket error is a retryable unavailability', () => {
  const err = classifyGcpError(grpcError(2, 'read ECONNRESET'), TARGET);
  assert.equal(err.code, 'STORE_UNAVAILABLE');
  assert.match(err.message, /ECONNRESET/);
});

test('socket errors without a gRPC status are STORE_UNAVAILABLE', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']) {
    const socketError = Object.assign(new Error(`connect ${code} 10.0.0.1:443`), {
      code,
      syscall: 'connect',
    });
    const err = classifyGcpError(socketError, TARGET);
    assert.equal(err.code, 'STORE_UNAVAILABLE', code);
    assert.equal(err.retryable, true);
    assert.match(err.message, new RegExp(code));
  }
});

test('missing Application Default Credentials are STORE_UNAUTHENTICATED with the fix', () => {
  const adc = new Error(
    'Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information.',
  );
  const err = classifyGcpError(adc, TARGET);
  assert.equal(err.code, 'STORE_UNAUTHENTICATED');
  assert.match(err.message, /Workload Identity/);
  assert.match(err.message, /gcloud auth application-default login/);
});

test('PERMISSION_DENIED names the IAM permission of the operation', () => {
  const cases: [CallTarget['method'], string][] = [
    ['GetSecret', 'secretmanager.secrets.get'],
    ['CreateSecret', 'secretmanager.secrets.create'],
    ['AddSecretVersion', 'secretmanager.versions.add'],
    ['AccessSecretVersion', 'secretmanager.versions.access'],
    ['ListSecretVersions', 'secretmanager.versions.list'],
    ['DeleteSecret', 'secretmanager.secrets.delete'],
  ];
  for (const [method, permission] of cases) {
    const err = classifyGcpError(grpcError(7, 'Permission denied.'), {
      method,
      resource: 'projects/p/secrets/s',
    });
    assert.equal(err.code, 'STORE_PERMISSION_DENIED');
    assert.ok(err.message.includes(permission), err.message);
    assert.ok(err.message.includes(method), err.message);
  }
});

test('AddSecretVersion never repeats the server text; other texts are bounded and printable', () => {
  const secret = '{"auths":{"r.io":{"auth":"dXNlcjpwYXNz"}}}';
  const add = classifyGcpError(grpcError(3, `payload ${secret}`), {
    method: 'AddSecretVersion',
    resource: 'projects/p/secrets/s',
  });
  assert.ok(!add.message.includes('dXNlcjpwYXNz'));
  assert.ok(!add.message.includes('auths'));
  const long = classifyGcpError(grpcError(13, `x\n\u001b[31m${'y'.repeat(500)}`), TARGET);
  assert.ok(!long.message.includes('\n'));
  assert.ok(!long.message.includes('\u001b'));
  assert.ok(long.message.length < 600);
});

test('anything else is STORE_FAILED; PullSecretErrors pass through; aborts are ABORTED', () => {
  assert.equal(classifyGcpError(new TypeError('boom'), TARGET).code, 'STORE_FAILED');
  assert.equal(classifyGcpError('a string', TARGET).code, 'STORE_FAILED');
  const own = new PullSecretError('STORE_CORRUPT', 'x');
  assert.equal(classifyGcpError(own, TARGET), own);
  assert.equal(abortedError(TARGET, undefined).code, 'ABORTED');
  assert.equal(grpcCodeName({ code: 99 }), 'UNKNOWN');
  assert.equal(grpcCodeName(null), 'UNKNOWN');
});
