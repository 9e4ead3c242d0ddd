import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { clone, type KubeObject, type ResourceType } from './types.js';

/** One change, as a watch stream reports it. */
export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rt: ResourceType;
  object: KubeObject;
  /** The resourceVersion of this change, as a number for ordering. */
  rv: number;
  /** The object before a MODIFIED change (for selector transitions in watches). */
  previous?: KubeObject;
}

/** How many past events a watch can resume from; older resourceVersions get 410 Gone. */
const HISTORY = 2000;

function timestamp(): string {
  // RFC 3339 with second precision, like the API server's metav1.Time.
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The object store: objects keyed by resource, namespace and name, one global resourceVersion
 * counter (like etcd's revision), and an event history for watches. It applies no API rules;
 * `operations.ts` does. Everything going in and out is deep-copied.
 */
export class ObjectStore {
  /** Emits `event` with a StoreEvent after every change. */
  readonly events = new EventEmitter();
  private revision = 1000;
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: StoreEvent[] = [];
  /** Watches from a version older than this get 410 Gone (set by `compact`). */
  private compactedAt = 0;

  constructor() {
    this.events.setMaxListeners(0);
  }

  private key(rt: ResourceType, namespace: string | undefined, name: string): string {
    return `${rt.resource}.${rt.group}/${rt.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  /** The newest resourceVersion, as served in list metadata. */
  currentResourceVersion(): string {
    return String(this.revision);
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.objects.get(this.key(rt, namespace, name));
    return obj === undefined ? undefined : clone(obj);
  }

  /** Objects of a type, in one namespace or all, sorted by namespace then name. */
  list(rt: ResourceType, namespace?: string): KubeObject[] {
    return this.page(rt, namespace, () => true, Infinity).items;
  }

  /**
   * One page of the objects of a type that `match` accepts, in `list` order: the first `limit` of
   * them, cloned, and how many matched in all. `match` sees the stored objects (it must not change
   * them), so a page of a large store clones only its own objects.
   */
  page(
    rt: ResourceType,
    namespace: string | undefined,
    match: (obj: KubeObject) => boolean,
    limit: number,
  ): { items: KubeObject[]; matched: number } {
    const prefix = `${rt.resource}.${rt.group}/${rt.namespaced && namespace !== undefined ? `${namespace}/` : ''}`;
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    const items: KubeObject[] = [];
    let matched = 0;
    for (const key of keys) {
      const obj = this.objects.get(key) as KubeObject;
      if (!match(obj)) continue;
      matched++;
      if (items.length < limit) items.push(clone(obj));
    }
    return { items, matched };
  }

  /** Stores a new object, assigning uid (unless preset), creationTimestamp, resourceVersion, generation. */
  create(rt: ResourceType, obj: KubeObject): KubeObject {
    const stored = clone(obj);
    stored.metadata.uid ??= randomUUID();
    stored.metadata.creationTimestamp = timestamp();
    if (rt.tracksGeneration) stored.metadata.generation = 1;
    else delete stored.metadata.generation;
    return this.commit('ADDED', rt, stored);
  }

  /** Replaces a stored object (the caller checked it exists and changed). */
  update(rt: ResourceType, obj: KubeObject): KubeObject {
    const previous = this.objects.get(this.key(rt, obj.metadata.namespace, obj.metadata.name ?? ''));
    return this.commit('MODIFIED', rt, clone(obj), previous);
  }

  /** Removes an object; returns it with the resourceVersion of the deletion. */
  delete(rt: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = this.key(rt, namespace, name);
    const existing = this.objects.get(key);
    if (existing === undefined) return undefined;
    this.objects.delete(key);
    existing.metadata.resourceVersion = String(++this.revision);
    this.record('DELETED', rt, existing);
    return clone(existing);
  }

  /**
   * Events after `rv`, oldest first; `undefined` when `rv` is older than the kept history
   * (the caller answers 410 Gone, and clients re-list).
   */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedAt) return undefined;
    const oldest = this.history[0];
    if (oldest !== undefined && rv < oldest.rv - 1 && this.history.length >= HISTORY) return undefined;
    return this.history.filter((e) => e.rv > rv).map((e) => ({ ...e, object: clone(e.object) }));
  }

  /** Forgets the event history up to now, as etcd's compaction does: a watch from an older version gets 410 Gone. */
  compact(): void {
    this.history.length = 0;
    this.compactedAt = this.revision;
  }

  private commit(
    type: 'ADDED' | 'MODIFIED',
    rt: ResourceType,
    obj: KubeObject,
    previous?: KubeObject,
  ): KubeObject {
    obj.metadata.resourceVersion = String(++this.revision);
    this.objects.set(this.key(rt, obj.metadata.namespace, obj.metadata.name ?? ''), obj);
    this.record(type, rt, obj, previous);
    return clone(obj);
  }

  private record(type: StoreEvent['type'], rt: ResourceType, obj: KubeObject, previous?: KubeObject): void {
    const event: StoreEvent = { type, rt, object: clone(obj), rv: this.revision, previous };
    this.history.push(event);
    if (this.history.length > HISTORY) this.history.shift();
    this.events.emit('event', event);
  }
}
