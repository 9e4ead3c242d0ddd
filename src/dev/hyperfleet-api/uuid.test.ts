import assert from 'node:assert/strict';
import { it } from 'node:test';
import { UUID_V7, uuidv7 } from './uuid.js';

it('makes lowercase UUIDv7s carrying the time, in creation order', () => {
  const now = Date.UTC(2026, 0, 1);
  const ids = Array.from({ length: 50 }, () => uuidv7(now));
  for (const id of ids) assert.match(id, UUID_V7);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  const later = uuidv7(now + 60_000);
  assert.equal(parseInt(later.replace(/-/g, '').slice(0, 12), 16), now + 60_000);
});
