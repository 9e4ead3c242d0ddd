import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { Contract } from './contract.js';
import type { StoreSnapshot } from './store.js';

/**
 * Reads the state file; `undefined` when there is none yet. Every cluster and status is checked
 * against the contract, so a hand-edited or truncated file fails the start loudly instead of serving
 * answers the real API could never give.
 *
 * @throws Error naming the file and the first problem
 */
export async function loadSnapshot(file: string, contract: Contract): Promise<StoreSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`HyperFleet API stand-in state file ${file} is not JSON`);
  }
  const snapshot = data as Partial<StoreSnapshot>;
  if (snapshot.format !== 'hyperfleet-api-stand-in/1' || !Array.isArray(snapshot.clusters)) {
    throw new Error(`HyperFleet API stand-in state file ${file} has an unknown format`);
  }
  for (const item of snapshot.clusters as unknown[]) {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as { cluster?: { id?: unknown }; statuses?: unknown };
    const problems = [
      ...contract.validate('Cluster', entry.cluster),
      ...(Array.isArray(entry.statuses) ? entry.statuses.flatMap((s) => contract.validate('AdapterStatus', s)) : [{ field: 'statuses', message: 'must be an array' }]),
    ];
    if (problems.length > 0 || typeof entry.cluster?.id !== 'string') {
      throw new Error(`HyperFleet API stand-in state file ${file} holds an invalid cluster: ${problems.map((p) => `${p.field} ${p.message}`).join('; ') || 'id missing'}`);
    }
  }
  return snapshot as StoreSnapshot;
}

/**
 * Saves snapshots in the order they are taken, each one crash-safely (temp file, fsync, rename), so
 * the file always holds a complete state and a restart loses no acknowledged change.
 */
export class SnapshotWriter {
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  /** Resolves when this snapshot (and every earlier one) is on disk. */
  save(snapshot: StoreSnapshot): Promise<void> {
    const text = `${JSON.stringify(snapshot, null, 2)}\n`;
    const write = this.queue.then(async () => {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, text);
    });
    // A failed write fails its own request; later saves still run.
    this.queue = write.catch(() => undefined);
    return write;
  }

  /** Waits for pending writes. */
  async flush(): Promise<void> {
    await this.queue;
  }
}
