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
    const entry = (typeof item === 'object' && item !== null ? item : {}) as {
      cluster?: { id?: unknown };
      statuses?: unknown;
    };
    const problems = [
      ...contract.validate('Cluster', entry.cluster),
      ...(Array.isArray(entry.statuses)
        ? entry.statuses.flatMap((s) => contract.validate('AdapterStatus', s))
        : [{ field: 'statuses', message: 'must be an array' }]),
    ];
    if (problems.length > 0 || typeof entry.cluster?.id !== 'string') {
      throw new Error(
        `HyperFleet API stand-in state file ${file} holds an invalid cluster: ` +
          `${problems.map((p) => `${p.field} ${p.message}`).join('; ') || 'id missing'}`,
      );
    }
  }
  return snapshot as StoreSnapshot;
}

/**
 * Saves the state crash-safely (temp file, fsync, rename), so the file always holds a complete state
 * and a restart loses no acknowledged change. Saves asked for while a write runs share the next
 * write, whose snapshot is taken when it starts: under load the file is written once per write
 * time rather than once per change, which keeps a fleet of thousands of clusters cheap to persist.
 */
export class SnapshotWriter {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  /** `take` returns the current state as JSON text; it is called once per write. */
  constructor(
    private readonly file: string,
    private readonly take: () => string,
  ) {}

  /** Resolves when a snapshot taken after this call is on disk; rejects when that write fails. */
  save(): Promise<void> {
    if (this.running === undefined) return this.start();
    // A write is under way with a snapshot that may predate the caller's change: join the next one.
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.start();
      });
    return this.next;
  }

  /** Waits for pending writes. */
  async flush(): Promise<void> {
    while (this.running !== undefined || this.next !== undefined)
      await (this.next ?? this.running)?.catch(() => undefined);
  }

  private start(): Promise<void> {
    const text = `${this.take()}\n`;
    const write = (async () => {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, text);
    })();
    this.running = write;
    // A failed write fails the requests that waited for it; later saves still run.
    void write
      .catch(() => undefined)
      .then(() => {
        if (this.running === write) this.running = undefined;
      });
    return write;
  }
}
