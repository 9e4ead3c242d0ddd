import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { PullSecretError } from '../../errors/index.js';
import { classifyFsError, errnoCode } from './fs-errors.js';
import { lockFs, takeOverIfOwnerGone } from './lock-owner.js';

/** Timing of the cross-process lock. */
export interface LockTiming {
  /**
   * A lock not refreshed for this long belongs to a crashed process and is taken over
   * (proper-lockfile refreshes held locks every `staleMs / 2`; minimum 2000). Applies only when the
   * holder cannot be proven dead (another host); a dead holder on this host is taken over at once.
   */
  staleMs: number;
  /** How long to wait for a busy lock before giving up with a retryable STORE_CONFLICT. */
  waitMs: number;
}

/** Defaults: a crashed holder on another host blocks others for at most ~10 s, and waiting outlasts that. */
export const DEFAULT_LOCK_TIMING: LockTiming = { staleMs: 10_000, waitMs: 30_000 };

/** Handed to the critical section so it can re-check ownership right before it publishes a write. */
interface HeldLock {
  /** @throws PullSecretError STORE_CONFLICT (retryable) when the lock was lost (taken over as stale). */
  assertHeld(): void;
}

/** In-process queues by lock path: callers in one process wait here instead of polling the filesystem. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` while holding an exclusive lock at `lockPath` across threads and processes
 * (proper-lockfile: an atomic `mkdir`, refreshed while held, taken over when stale). The lock records
 * its holder's host and PID (lock-owner.ts), so a holder that died on this host is taken over at once.
 * Waits for a busy lock with jittered backoff, up to `timing.waitMs`; `signal` stops the wait.
 *
 * @throws PullSecretError ABORTED, STORE_CONFLICT (lock busy too long, or lost), a classified
 *   filesystem error, or whatever `fn` throws.
 */
export async function withLock<T>(
  lockPath: string,
  timing: LockTiming,
  signal: AbortSignal | undefined,
  fn: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  const run = previous.then(
    () => holdLock(lockPath, timing, signal, fn),
    () => holdLock(lockPath, timing, signal, fn),
  );
  const tail = run.catch(() => undefined);
  queues.set(lockPath, tail);
  void tail.then(() => {
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  });
  return run;
}

async function holdLock<T>(
  lockPath: string,
  timing: LockTiming,
  signal: AbortSignal | undefined,
  fn: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  let lost: unknown;
  const release = await acquire(lockPath, timing, signal, (err) => {
    lost = err;
  });
  const held: HeldLock = {
    assertHeld() {
      if (lost !== undefined) {
        throw new PullSecretError(
          'STORE_CONFLICT',
          `local store: lost the lock ${lockPath} (not refreshed in time); nothing was written`,
          { cause: lost },
        );
      }
    },
  };
  try {
    if (signal?.aborted) throw new PullSecretError('ABORTED', 'operation aborted', { cause: signal.reason });
    return await fn(held);
  } finally {
    // A failed release (lock already lost) changes nothing for the caller: the work is done or refused.
    await release().catch(() => undefined);
  }
}

async function acquire(
  lockPath: string,
  timing: LockTiming,
  signal: AbortSignal | undefined,
  onCompromised: (err: Error) => void,
): Promise<() => Promise<void>> {
  const deadline = Date.now() + timing.waitMs;
  let delay = 5;
  for (;;) {
    if (signal?.aborted) throw new PullSecretError('ABORTED', 'operation aborted', { cause: signal.reason });
    try {
      // `realpath: false`: the lock guards a name that may not exist yet (a secret being created).
      return await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale: timing.staleMs,
        retries: 0,
        onCompromised,
        fs: lockFs,
      });
    } catch (err) {
      if (errnoCode(err) !== 'ELOCKED') throw classifyFsError(err, 'lock', lockPath);
    }
    // A holder killed on this host (kill -9, OOM) is known dead at once: no need to wait until its lock goes stale.
    if (await takeOverIfOwnerGone(lockPath)) continue;
    if (Date.now() >= deadline) {
      throw new PullSecretError(
        'STORE_CONFLICT',
        `local store: ${lockPath} stayed locked by another process for ${timing.waitMs} ms`,
      );
    }
    // Full jitter keeps many waiting processes from retrying in lock step.
    const wait = Math.min(Math.random() * delay, Math.max(0, deadline - Date.now()));
    delay = Math.min(delay * 2, 200);
    try {
      await sleep(wait, undefined, { signal });
    } catch (err) {
      throw new PullSecretError('ABORTED', 'operation aborted', { cause: err });
    }
  }
}
