import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pinToken, type Pin } from '../../src/retention/pin.js';

const PIN: Pin = {
  clusterId: 'c1',
  secretId: 's1',
  sourceVersion: '2',
  version: '5',
  contentSha256: 'a'.repeat(64),
  by: 'admin',
  at: '2025-01-01T00:00:00.000Z',
};
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

describe('pinToken (the Job label of the pin state)', () => {
  it('is none without a pin, and the version and time as a label value with one', () => {
    assert.equal(pinToken(undefined), 'none');
    assert.equal(pinToken(PIN), 'v5.2025-01-01T000000.000Z');
    assert.notEqual(pinToken({ ...PIN, at: '2025-01-01T00:00:01.000Z' }), pinToken(PIN));
    assert.match(pinToken({ ...PIN, version: undefined }), /^v2\./);
  });

  it('hashes a version too long for a label value, staying within 63 label-safe characters', () => {
    const long = pinToken({ ...PIN, version: 'x'.repeat(80) });
    assert.match(long, LABEL_VALUE);
    assert.ok(long.length <= 63);
    assert.notEqual(long, pinToken({ ...PIN, version: 'y'.repeat(80) }));
  });
});
