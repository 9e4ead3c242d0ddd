import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fileStem,
  nextVersionNumber,
  parseRecord,
  serializeRecord,
  type SecretRecord,
} from './secret-record.js';

const record: SecretRecord = {
  format: 1,
  id: 's1',
  labels: { 'managed-by': 'hyperfleet' },
  createTime: '2025-01-01T00:00:00.000Z',
  etag: 'e1',
  versions: [
    {
      version: 1,
      state: 'DESTROYED',
      createTime: '2025-01-01T00:00:00.000Z',
      destroyTime: '2025-01-02T00:00:00.000Z',
    },
    { version: 3, state: 'ENABLED', createTime: '2025-01-01T00:00:00.000Z', keyId: 'k', payload: 'AAAA' },
  ],
};

test('fileStem keeps lowercase ids readable and maps the rest to distinct short names', () => {
  assert.equal(fileStem('hyperfleet-0199-pull-secret'), 'hyperfleet-0199-pull-secret');
  const stems = ['Abc', 'abc', 'ABC', 'a'.repeat(255), `${'a'.repeat(254)}b`].map(fileStem);
  assert.equal(new Set(stems).size, stems.length);
  for (const stem of stems) assert.ok(stem.length <= 200, stem);
  assert.match(fileStem('Abc'), /^abc~[0-9a-f]{32}$/);
});

test('records round trip; numbering continues past the highest number ever used', () => {
  assert.deepEqual(parseRecord(Buffer.from(serializeRecord(record)), 's1', '/x'), record);
  assert.equal(nextVersionNumber(record), 4);
  assert.equal(nextVersionNumber({ ...record, versions: [] }), 1);
});

test('malformed records are STORE_CORRUPT naming the file', () => {
  const bad = (value: unknown) => Buffer.from(JSON.stringify(value));
  assert.throws(() => parseRecord(Buffer.from('{'), 's1', '/x/s1.json'), {
    code: 'STORE_CORRUPT',
    message: /\/x\/s1\.json is not valid JSON/,
  });
  assert.throws(() => parseRecord(bad({ ...record, format: 2 }), 's1', '/x'), {
    code: 'STORE_CORRUPT',
    message: /at "format"/,
  });
  assert.throws(
    () => parseRecord(bad({ ...record, versions: [{ ...record.versions[1], state: 'GONE' }] }), 's1', '/x'),
    { code: 'STORE_CORRUPT' },
  );
  assert.throws(
    () => parseRecord(bad({ ...record, versions: [record.versions[1], record.versions[1]] }), 's1', '/x'),
    { code: 'STORE_CORRUPT', message: /twice/ },
  );
  assert.throws(() => parseRecord(bad(record), 's2', '/x'), {
    code: 'STORE_CORRUPT',
    message: /holds secret "s1"/,
  });
});
