import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from './crc32c.js';

test('crc32c matches the published check value and RFC 3720 vectors', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.alloc(0)), 0);
  assert.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa);
  assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
  const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  assert.equal(crc32c(ascending), 0x46dd794e);
});
