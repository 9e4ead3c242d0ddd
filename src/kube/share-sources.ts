import { createHash } from 'node:crypto';
import { defaultManagementNamespace } from '../pullsecret/cluster-names.js';
import { isManaged } from '../pullsecret/identifiers.js';
import { SHARE_LABEL, type SourceKind, type SourceMatcher } from './share-types.js';

/**
 * The source Secrets the share controller copies, as its Secret watch sees them (share-state.ts):
 * each told apart by its kind's row (`SourceMatcher`: name, type, labels), keeping only the data
 * keys that kind copies.
 */

/** A cluster's Secret of one source kind, with the data its kind copies (base64, as served). */
export interface SourceSecret {
  kind: SourceKind;
  namespace: string;
  name: string;
  type: string;
  data: Record<string, string>;
  sha256: string;
}

/** A Secret as the watch delivers it (only what is read here). */
interface WatchedSecret {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

/** A source's kind and cluster, as `onChange` reports them. */
export interface SourceRef {
  source: SourceKind;
  clusterId: string;
}

/** SHA-256 of a Secret's data (keys sorted), as the copies' annotation and the comparisons use it. */
export function dataSha256(data: Readonly<Record<string, string>> | undefined): string {
  const hash = createHash('sha256');
  for (const key of Object.keys(data ?? {}).sort()) hash.update(`${key}\0${data?.[key] ?? ''}\0`);
  return hash.digest('hex');
}

/** The source Secrets by kind, cluster and namespace. */
export class ShareSources {
  /** `{kind}/{clusterId}` → namespace → source Secret. */
  private readonly byKey = new Map<string, { ref: SourceRef; byNs: Map<string, SourceSecret> }>();
  /** `{namespace}/{name}` → the `byKey` key it is held under. */
  private readonly held = new Map<string, string>();

  constructor(private readonly matchers: readonly SourceMatcher[]) {}

  /** The kind and cluster of a source Secret, or undefined for anything else (copies included). */
  private match(secret: WatchedSecret): { matcher: SourceMatcher; clusterId: string } | undefined {
    const labels = secret.metadata?.labels ?? {};
    const clusterId = labels['cluster-id'];
    if (clusterId === undefined || !isManaged(labels) || labels[SHARE_LABEL] !== undefined) return undefined;
    const matcher = this.matchers.find(
      (m) =>
        secret.metadata?.name === m.secretName(clusterId) &&
        (secret.type ?? 'Opaque') === m.type &&
        Object.entries(m.labels).every(([key, value]) => labels[key] === value),
    );
    return matcher === undefined ? undefined : { matcher, clusterId };
  }

  /** A cluster's source of a kind: the one in `clusters-{id}` when several exist, else the first by namespace. */
  get(kind: SourceKind, clusterId: string): SourceSecret | undefined {
    const byNs = this.byKey.get(`${kind}/${clusterId}`)?.byNs;
    if (byNs === undefined || byNs.size === 0) return undefined;
    return byNs.get(defaultManagementNamespace(clusterId)) ?? byNs.get([...byNs.keys()].sort()[0] ?? '');
  }

  /**
   * Records a Secret as it now is: a source (`match` found it) with only its kind's data keys, or
   * none (a source that lost its labels is one no more).
   * @returns the sources that changed: its own when its data changed or it is new, and the one it was
   * held as before when that differs.
   */
  put(secret: WatchedSecret): SourceRef[] {
    const namespace = secret.metadata?.namespace ?? '';
    const name = secret.metadata?.name ?? '';
    const found = this.match(secret);
    const key = found === undefined ? undefined : `${found.matcher.kind}/${found.clusterId}`;
    const changed: SourceRef[] = [];
    if (this.held.get(`${namespace}/${name}`) !== key) {
      const gone = this.forget(namespace, name);
      if (gone !== undefined) changed.push(gone);
    }
    if (found === undefined) return changed;
    const { matcher, clusterId } = found;
    const byNs = this.entry(matcher.kind, clusterId).byNs;
    const data: Record<string, string> = {};
    for (const k of matcher.keys) if (secret.data?.[k] !== undefined) data[k] = secret.data[k];
    const sha256 = dataSha256(data);
    const before = byNs.get(namespace);
    byNs.set(namespace, { kind: matcher.kind, namespace, name, type: matcher.type, data, sha256 });
    this.held.set(`${namespace}/${name}`, `${matcher.kind}/${clusterId}`);
    if (before?.sha256 !== sha256) changed.push({ source: matcher.kind, clusterId });
    return changed;
  }

  /** Forgets the Secret `namespace/name` if it is held as a source. @returns the source it was. */
  forget(namespace: string, name: string): SourceRef | undefined {
    const key = this.held.get(`${namespace}/${name}`);
    if (key === undefined) return undefined;
    this.held.delete(`${namespace}/${name}`);
    const entry = this.byKey.get(key);
    entry?.byNs.delete(namespace);
    return entry?.ref;
  }

  /** Every kind and cluster seen since the last `clear` (for a relist to report them all). */
  refs(): Map<string, SourceRef> {
    return new Map([...this.byKey].map(([key, { ref }]) => [key, ref]));
  }

  clear(): void {
    this.byKey.clear();
    this.held.clear();
  }

  private entry(kind: SourceKind, clusterId: string) {
    const key = `${kind}/${clusterId}`;
    let entry = this.byKey.get(key);
    if (entry === undefined) {
      entry = { ref: { source: kind, clusterId }, byNs: new Map() };
      this.byKey.set(key, entry);
    }
    return entry;
  }
}
