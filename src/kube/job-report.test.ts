import assert from 'node:assert/strict';
import { test } from 'node:test';
import { terminationMessage, TERMINATION_MESSAGE_MAX, type JobResultFile } from '../job/result-file.js';
import { parseJobReport } from './job-report.js';

const base: JobResultFile = {
  status: 'success',
  reason: 'SecretUpdated',
  message: 'Updated pull secret with a new version',
  timestamp: '2026-01-01T00:00:00.000Z',
};

test('the termination message round-trips into the report the adapter reads', () => {
  const text = terminationMessage({
    ...base,
    current_version: '2',
    previous_version: '1',
    previous_version_state: 'ENABLED',
    previous_grace_ends_at: '2026-01-02T00:00:00.000Z',
    registry_verification: { mode: 'warn', results: { 'quay.io': 'rejected' } },
  });
  assert.deepEqual(parseJobReport(text), {
    status: 'success',
    reason: 'SecretUpdated',
    message: base.message,
    currentVersion: '2',
    previousVersion: '1',
    previousVersionState: 'ENABLED',
    previousGraceEndsAt: '2026-01-02T00:00:00.000Z',
    registryVerification: { mode: 'warn', results: { 'quay.io': 'rejected' } },
  });
  const failure = parseJobReport(
    terminationMessage({
      ...base,
      status: 'failure',
      reason: 'CredentialsRejected',
      message: 'registry refused ...',
      error_code: 'CREDENTIALS_REJECTED',
    }),
  );
  assert.equal(failure?.errorCode, 'CREDENTIALS_REJECTED');
});

test('a report never exceeds the 4096 bytes the kubelet keeps: the message is cut, then the verification dropped', () => {
  const results = Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`registry-${i}.example.com:5000`, 'accepted' as const]),
  );
  const text = terminationMessage({
    ...base,
    message: 'x'.repeat(5000),
    registry_verification: { mode: 'enforce', results },
  });
  assert.ok(Buffer.byteLength(text) <= TERMINATION_MESSAGE_MAX, String(Buffer.byteLength(text)));
  const report = parseJobReport(text);
  assert.equal(report?.registryVerification, undefined);
  assert.ok((report?.message.length ?? 0) <= 512);
});

test('anything else is no report, never an error', () => {
  for (const text of [
    undefined,
    '',
    'Error: boom',
    '[]',
    'null',
    '{"status":"done","reason":"X"}',
    '{"status":"success"}',
    JSON.stringify({ status: 'success', reason: 'r'.repeat(2000) }),
  ]) {
    assert.equal(parseJobReport(text), undefined, String(text));
  }
  // Unknown outcomes and modes are dropped, the rest kept.
  const report = parseJobReport(
    JSON.stringify({
      status: 'success',
      reason: 'SecretCreated',
      current_version: 7,
      registry_verification: { mode: 'enforce', results: { a: 'accepted', b: 'pwned' } },
    }),
  );
  assert.deepEqual(report, {
    status: 'success',
    reason: 'SecretCreated',
    message: '',
    registryVerification: { mode: 'enforce', results: { a: 'accepted' } },
  });
  assert.equal(
    parseJobReport(
      JSON.stringify({
        status: 'success',
        reason: 'R',
        registry_verification: { mode: 'strict', results: {} },
      }),
    )?.registryVerification,
    undefined,
  );
});

test('a rollback pin served by the Job reaches the report (snake_case in the file, the status shape back)', () => {
  const text = terminationMessage({
    ...base,
    reason: 'SecretUpToDate',
    current_version: '3',
    pin: {
      source_version: '1',
      version: '3',
      by: 'admin-api (current token, 127.0.0.1)',
      at: '2026-01-01T00:00:00.000Z',
      reason: 'bad credential in v2',
      expires_at: '2026-01-02T00:00:00.000Z',
    },
  });
  assert.deepEqual(parseJobReport(text)?.pin, {
    sourceVersion: '1',
    version: '3',
    by: 'admin-api (current token, 127.0.0.1)',
    at: '2026-01-01T00:00:00.000Z',
    reason: 'bad credential in v2',
    expiresAt: '2026-01-02T00:00:00.000Z',
  });
  // A pin without its required fields is left out, like any field that does not fit.
  assert.equal(
    parseJobReport(JSON.stringify({ status: 'success', reason: 'R', pin: { by: 'x' } }))?.pin,
    undefined,
  );
});

test('a pin whose reason would not fit is dropped, never the report', () => {
  const text = terminationMessage({
    ...base,
    pin: { source_version: '1', by: 'cli (ops)', at: '2026-01-01T00:00:00.000Z', reason: 'r'.repeat(5000) },
  });
  assert.ok(Buffer.byteLength(text) <= TERMINATION_MESSAGE_MAX);
  assert.equal(parseJobReport(text)?.reason, 'SecretUpdated');
});
