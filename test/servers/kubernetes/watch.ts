import type { ServerResponse } from 'node:http';
import { parseFieldSelector, parseLabelSelector } from './label-selector.js';
import { gone } from './status.js';
import type { ObjectStore, StoreEvent } from './store.js';
import type { KubeObject, ResourceType } from './types.js';

export interface WatchRequest {
  rt: ResourceType;
  /** Undefined for a cluster-wide watch. */
  namespace?: string;
  params: URLSearchParams;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Serves a watch: a chunked stream of `{"type": …, "object": …}` JSON lines, like the API server.
 * Without a resourceVersion (or with "0") it starts with an ADDED event per existing object; with
 * one it replays later changes, or sends an ERROR event with 410 Expired when that version is too
 * old. Label/field selectors apply, and an object leaving or entering the selection is reported as
 * DELETED / ADDED. Returns a function that ends the stream.
 *
 * @throws StatusError 400 for bad selectors (before any byte is written).
 */
export function serveWatch(res: ServerResponse, store: ObjectStore, req: WatchRequest): () => void {
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
    else if (before) send('DELETED', event.object);
  };

  const rv = req.params.get('resourceVersion');
  if (rv !== null && rv !== '' && rv !== '0') {
    const replay = store.eventsSince(Number(rv));
    if (replay === undefined) {
      send('ERROR', gone(`too old resource version: ${rv} (${store.currentResourceVersion()})`).body);
      res.end();
      return () => undefined;
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
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(end, timeoutSeconds > 0 ? timeoutSeconds * 1000 : 30 * 60 * 1000);
  timer.unref();
  res.on('close', end);
  return end;
}
