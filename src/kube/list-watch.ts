import { setTimeout as sleep } from 'node:timers/promises';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { describeError } from '../errors/index.js';
import { backoffDelay, type RetryPolicy } from '../util/retry.js';

/**
 * The one list+watch of this code base, used to wait for one Job (`job-watch.ts`) and by the
 * long-running informers (`job-informer.ts`, `secret-cache.ts`, the shares' `share-state.ts`): a
 * watch request with the client's `Watch`, ended by the server's timeout, an ERROR event (410 Gone:
 * the resourceVersion was compacted), a dropped connection, or the caller. The caller then re-lists
 * (after an error or 410) or watches again from the last resourceVersion seen (after a clean end), so
 * no transition is missed.
 */

/** Longest single watch request; the server ends it and the caller watches again. */
const MAX_WATCH_SECONDS = 300;

/** How a watch request ended. `progressed`: at least one event arrived. */
type WatchEnd =
  | { kind: 'stopped' }
  | { kind: 'aborted' }
  | { kind: 'ended'; progressed: boolean }
  | { kind: 'relist'; gone: boolean; progressed: boolean };

/** A watch event as the client delivers it. */
type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

interface WatchOnceInput {
  kubeConfig: KubeConfig;
  /** e.g. `/api/v1/secrets` or `/apis/batch/v1/namespaces/x/jobs`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version (from a list or the last event); unset: from now, with ADDED for each object. */
  resourceVersion?: string;
  signal: AbortSignal;
  /** Called for every event but ERROR; return true to stop watching (`stopped`). */
  onEvent: (type: WatchEventType, object: unknown) => boolean | void;
}

function statusCodeOf(err: unknown): number | undefined {
  const code =
    (err as { statusCode?: unknown; code?: unknown } | undefined)?.statusCode ??
    (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * One watch request. Never rejects: every end is a WatchEnd. An ERROR event or a refused request
 * is `relist` (`gone` for 410, in the stream or as the answer); the server closing the stream is
 * `ended` (watch again from the last version); a connection that breaks is `relist`.
 */
export function watchOnce(input: WatchOnceInput): Promise<WatchEnd> {
  const { signal } = input;
  return new Promise<WatchEnd>((resolve) => {
    let controller: AbortController | undefined;
    let settled = false;
    let progressed = false;
    const settle = (end: WatchEnd): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      controller?.abort();
      resolve(end);
    };
    const onAbort = (): void => settle({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    const onEvent = (type: string, object: unknown): void => {
      if (settled) return;
      if (type === 'ERROR') {
        settle({
          kind: 'relist',
          gone: (object as { code?: unknown } | undefined)?.code === 410,
          progressed,
        });
        return;
      }
      progressed = true;
      if (input.onEvent(type as WatchEventType, object) === true) settle({ kind: 'stopped' });
    };
    const query: Record<string, string | number | boolean> = {
      timeoutSeconds: MAX_WATCH_SECONDS,
      allowWatchBookmarks: true,
    };
    if (input.labelSelector !== undefined) query.labelSelector = input.labelSelector;
    if (input.fieldSelector !== undefined) query.fieldSelector = input.fieldSelector;
    if (input.resourceVersion !== undefined) query.resourceVersion = input.resourceVersion;
    new Watch(input.kubeConfig)
      .watch(input.path, query, onEvent, (err: unknown) =>
        settle(
          err === null || err === undefined
            ? { kind: 'ended', progressed }
            : { kind: 'relist', gone: statusCodeOf(err) === 410, progressed },
        ),
      )
      .then((c) => {
        controller = c;
        if (settled) c.abort();
      })
      .catch((err: unknown) =>
        settle({ kind: 'relist', gone: statusCodeOf(err) === 410, progressed: false }),
      );
    if (signal.aborted) onAbort();
  });
}

/** What a list returns: the items and the version to watch from. */
export interface Listed<T> {
  items: T[];
  resourceVersion?: string;
}

/** One page of a list as the generated client returns it. */
interface ListPage<I> {
  items: I[];
  metadata?: { resourceVersion?: string; _continue?: string };
}

/**
 * Lists every page (`fetchPage(continueToken)`), keeping of each item only what `keep` returns, so
 * the whole objects of one page at most are in memory.
 */
export async function listPages<I, T>(
  fetchPage: (cont: string | undefined) => Promise<ListPage<I>>,
  keep: (item: I) => T,
): Promise<Listed<T>> {
  const items: T[] = [];
  let cont: string | undefined;
  let resourceVersion: string | undefined;
  do {
    const page = await fetchPage(cont);
    for (const item of page.items) items.push(keep(item));
    resourceVersion = page.metadata?.resourceVersion;
    cont = page.metadata?._continue || undefined;
  } while (cont !== undefined);
  return { items, resourceVersion };
}

interface ListWatchInput<T> {
  kubeConfig: KubeConfig;
  path: string;
  labelSelector?: string;
  signal: AbortSignal;
  /** Pace of retries after failed lists and broken watches (maxAttempts is ignored: it keeps trying). */
  retry: RetryPolicy;
  /** Lists every selected object (paging is the caller's), as the caller keeps them. Throws on failure. */
  list: (signal: AbortSignal) => Promise<Listed<T>>;
  /** The full set after each list, as of `resourceVersion`; replaces what the caller knew. */
  onList: (items: T[], reason: RelistReason, resourceVersion: string | undefined) => void;
  /** A watch event's object as the client parsed it (the caller keeps what it needs). */
  onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: unknown) => void;
  /** The watch broke: what the caller knows may be stale until the next `onList`. */
  onUnsynced?: () => void;
  /** Logging hook for failures (never with object data). */
  onError?: (fields: Record<string, unknown>) => void;
}

/** Why a list was made: the first one, a compacted version (410 Gone), or a broken watch or failed list. */
export type RelistReason = 'initial' | 'expired' | 'error';

function versionOf(object: unknown): string | undefined {
  const rv = (object as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

/**
 * Keeps `onList`/`onEvent` fed until `signal` fires: list, then watch from the list's version,
 * watching again from the last version after a clean end, listing again after 410 Gone or a broken
 * watch. Failures back off (jittered, capped) and are retried for ever. Resolves once aborted;
 * never rejects.
 */
export async function runListWatch<T>(input: ListWatchInput<T>): Promise<void> {
  const { signal } = input;
  let reason: RelistReason = 'initial';
  let failures = 0;
  const pause = async (): Promise<boolean> => {
    failures++;
    try {
      await sleep(backoffDelay(input.retry, Math.min(failures, 20)), undefined, { signal });
      return true;
    } catch {
      return false;
    }
  };
  while (!signal.aborted) {
    let listed: Listed<T>;
    try {
      listed = await input.list(signal);
    } catch (err) {
      if (signal.aborted) return;
      input.onError?.({ operation: 'list', path: input.path, ...describeError(err) });
      reason = 'error';
      if (!(await pause())) return;
      continue;
    }
    input.onList(listed.items, reason, listed.resourceVersion);
    let version = listed.resourceVersion;
    for (;;) {
      const started = performance.now();
      const end = await watchOnce({
        kubeConfig: input.kubeConfig,
        path: input.path,
        labelSelector: input.labelSelector,
        resourceVersion: version,
        signal,
        onEvent: (type, object) => {
          version = versionOf(object) ?? version;
          if (type !== 'BOOKMARK') input.onEvent(type, object);
        },
      });
      if (end.kind === 'aborted' || end.kind === 'stopped') return;
      if (end.kind === 'ended') {
        // A server that ends watches at once must not be asked again in a tight loop.
        if (performance.now() - started < 1000 && !(await pause())) return;
        if (end.progressed) failures = 0;
        continue;
      }
      input.onUnsynced?.();
      reason = end.gone ? 'expired' : 'error';
      if (end.progressed || end.gone) failures = 0;
      else input.onError?.({ operation: 'watch', path: input.path, expired: end.gone });
      // An expired version is normal and re-listed at once; a refused or broken watch backs off.
      if (!end.gone && !(await pause())) return;
      break;
    }
  }
}
