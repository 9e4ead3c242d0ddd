import type { ServerResponse } from 'node:http';
import { parseFieldSelector, parseLabelSelector } from './label-selector.js';
import { gone } from './status.js';
import type { ObjectStore, StoreEvent } from './store.js';
import { apiVersionOf, type KubeObject, type ResourceType } from './types.js';

export interface WatchRequest {
  rt: ResourceType;
  /** Undefined for a cluster-wide watch. */
  namespace?: string;
  params: URLSearchParams;
  /** How often a watch that allows bookmarks gets one; the API server's is about a minute. */
  bookmarkIntervalMs?: number;
}

/** An open watch: `end` closes it; `bookmark` sends a BOOKMARK now when the client allowed them (else nothing). */
export interface OpenWatch {
  end: () => void;
  bookmark: () => void;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/**
 * Serves a watch: a chunked stream of `{"type": …, "object": …}` JSON lines, like the API server.
 * Without a resourceVersion (or with "0") it starts with an ADDED event per existing object; with
 * one it replays later changes, or sends an ERROR event with 410 Expired when that version is too
 * old. Label/field selectors apply, and an object leaving or entering the selection is reported as
 * DELETED / ADDED; the DELETED one carries the object as it was before the change (still matching the
 * selector) with the change's resourceVersion, as the watch cache does (kubernetes/kubernetes
 * staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go `convertToWatchEvent`). With
 * `allowWatchBookmarks=true`, BOOKMARK events carry only the current resourceVersion (an object of the
 * watched kind with `metadata.resourceVersion`), every `bookmarkIntervalMs` and on `bookmark()`
 * (https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks).
 *
 * @throws StatusError 400 for bad selectors (before any byte is written).
 */
export function serveWatch(res: ServerResponse, store: ObjectStore, req: WatchRequest): OpenWatch {
  const labels = parseLabelSelector(req.params.get('labelSelector'));
  const fields = parseFieldSelector(req.params.get('fieldSelector'));
  const selected = (obj: KubeObject | undefined): boolean =>
    obj !== undefined &&
    (!req.rt.namespaced || req.namespace === undefined || obj.metadata.namespace === req.namespace) &&
    labels(obj.metadata.labels) &&
    fields({ 'metadata.name': obj.metadata.name ?? '', 'metadata.namespace': obj.metadata.namespace ?? '' });

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const send = (type: EventType | 'ERROR', object: unknown): void => {
    if (!res.writableEnded) res.write(`${JSON.stringify({ type, object })}\n`);
  };
  const forward = (event: StoreEvent): void => {
    if (event.rt !== req.rt) return;
    const now = selected(event.object);
    if (event.type !== 'MODIFIED') {
      if (now) send(event.type, event.object);
      return;
    }
    const before = selected(event.previous);
    if (now) send(before ? 'MODIFIED' : 'ADDED', event.object);
    else if (before && event.previous !== undefined) {
      const { previous } = event;
      send('DELETED', {
        ...previous,
        metadata: { ...previous.metadata, resourceVersion: event.object.metadata.resourceVersion },
      });
    }
  };
  const bookmarks = req.params.get('allowWatchBookmarks') === 'true';
  const bookmark = (): void => {
    if (bookmarks)
      send('BOOKMARK', {
        kind: req.rt.kind,
        apiVersion: apiVersionOf(req.rt),
        metadata: { resourceVersion: store.currentResourceVersion() },
      });
  };

  const rv = req.params.get('resourceVersion');
  if (rv !== null && rv !== '' && rv !== '0') {
    const replay = store.eventsSince(Number(rv));
    if (replay === undefined) {
      send('ERROR', gone(`too old resource version: ${rv} (${store.currentResourceVersion()})`).body);
      res.end();
      return { end: () => undefined, bookmark: () => undefined };
    }
    for (const event of replay) forward(event);
  } else {
    for (const obj of store.list(req.rt, req.namespace)) if (selected(obj)) send('ADDED', obj);
  }
  store.events.on('event', forward);

  const timeoutSeconds = Number(req.params.get('timeoutSeconds') ?? '0');
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    store.events.off('event', forward);
    clearTimeout(timer);
    clearInterval(ticker);
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(end, timeoutSeconds > 0 ? timeoutSeconds * 1000 : 30 * 60 * 1000);
  timer.unref();
  const ticker = setInterval(bookmark, req.bookmarkIntervalMs ?? 60_000);
  ticker.unref();
  res.on('close', end);
  return { end, bookmark };
}
