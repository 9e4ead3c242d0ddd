import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotWriter } from './persistence.js';

it('saves during a write share the next one, and each resolves with its change on disk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-snapshot-'));
  try {
    const file = join(dir, 'state', 'api.json');
    let state = 0;
    let takes = 0;
    const writer = new SnapshotWriter(file, () => {
      takes += 1;
      return JSON.stringify({ state });
    });
    const saves: Array<Promise<void>> = [];
    for (let i = 1; i <= 50; i++) {
      state = i;
      const mine = i;
      saves.push(
        writer
          .save()
          .then(async () =>
            assert.ok((JSON.parse(await readFile(file, 'utf8')) as { state: number }).state >= mine),
          ),
      );
    }
    await Promise.all(saves);
    await writer.flush();
    assert.equal(takes, 2, 'one write at once, then one for everything that came in meanwhile');
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { state: 50 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
