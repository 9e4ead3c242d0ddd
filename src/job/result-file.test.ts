import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactor } from '../pullsecret/redact.js';
import { CAN_SWITCH_UID, readAs, STATUS_REPORTER_UID } from '../../test/support/read-as.js';
import { RESULT_MESSAGE_MAX, RESULT_REASON_MAX, writeResultFile } from './result-file.js';

test('the result file keeps the sidecar contract: status, reason ≤ 128, message ≤ 1024, extra data kept', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-result-'));
  try {
    const path = join(dir, 'adapter-result.json');
    await writeResultFile(path, {
      status: 'failure',
      reason: `Reason${'X'.repeat(300)}`,
      message: 'm'.repeat(5000),
      cluster_id: 'c1',
      error_code: 'STORE_UNAVAILABLE',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    const file = JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
    assert.equal(file.status, 'failure');
    assert.equal(file.reason?.length, RESULT_REASON_MAX);
    assert.equal(file.message?.length, RESULT_MESSAGE_MAX);
    assert.ok(file.message?.endsWith('...'));
    assert.deepEqual([file.cluster_id, file.error_code], ['c1', 'STORE_UNAVAILABLE']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a credential near the cut is redacted before the message is shortened, so no half of it survives', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-result-'));
  const canary = 'canary-credential-0123456789abcdef';
  redactor.register([canary]);
  try {
    const path = join(dir, 'r.json');
    await writeResultFile(path, {
      status: 'failure',
      reason: 'Failed',
      message: `${'m'.repeat(1000)}${canary}`,
      timestamp: 't',
    });
    const text = await readFile(path, 'utf8');
    assert.ok(!text.includes(canary.slice(0, 12)), 'no prefix of the credential');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  'the status-reporter sidecar reads the result file as another non-root UID (65532), whatever the umask',
  { skip: !CAN_SWITCH_UID && 'needs root to start a reader as another UID' },
  async () => {
    // A directory that UID may traverse, like the pod's shared `/results` emptyDir.
    const dir = await mkdtemp(join(tmpdir(), 'ps-result-'));
    const umask = process.umask(0o077);
    try {
      await chmod(dir, 0o755);
      const path = join(dir, 'adapter-result.json');
      await writeResultFile(path, {
        status: 'success',
        reason: 'SecretCreated',
        message: 'created',
        timestamp: '2026-01-01T00:00:00.000Z',
      });
      const text = await readAs(STATUS_REPORTER_UID, path);
      assert.ok(!text.startsWith('ERROR'), `read as UID ${STATUS_REPORTER_UID}: ${text}`);
      assert.equal((JSON.parse(text) as { status?: string }).status, 'success');
      assert.equal((await stat(path)).mode & 0o777, 0o644, 'readable by all, writable by the job only');
    } finally {
      process.umask(umask);
      await rm(dir, { recursive: true, force: true });
    }
  },
);
