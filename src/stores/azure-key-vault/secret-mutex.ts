/** Writes in progress per secret URL, shared by every Azure store client of this process. */
const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `work` after every earlier `serialized` call for the same `key` has settled, so that writers
 * of one process (adapter tasks, several clients) never interleave a re-read and a write of the
 * same secret. Key Vault has no conditional write: this is what makes `ifLatest` exact within a
 * process. The map holds only keys with work pending.
 */
export async function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
