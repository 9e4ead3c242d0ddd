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

  constructor(private readonly matchers: readonly SourceMatcher[]) {}

  /** The kind and cluster of a source Secret, or undefined for anything else (copies included). */
  match(secret: WatchedSecret): { matcher: SourceMatcher; clusterId: string } | undefined {
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
   * Records a source Secret (`match` found it) with only its kind's data keys.
   * @returns its ref when its data changed (or it is new).
   */
  put(secret: WatchedSecret, found: { matcher: SourceMatcher; clusterId: string }): SourceRef | undefined {
    const { matcher, clusterId } = found;
    const namespace = secret.metadata?.namespace ?? '';
    const byNs = this.entry(matcher.kind, clusterId).byNs;
    const data: Record<string, string> = {};
    for (const key of matcher.keys) if (secret.data?.[key] !== undefined) data[key] = secret.data[key];
    const sha256 = dataSha256(data);
    const before = byNs.get(namespace);
    const name = secret.metadata?.name ?? '';
    byNs.set(namespace, { kind: matcher.kind, namespace, name, type: matcher.type, data, sha256 });
    return before?.sha256 === sha256 ? undefined : { source: matcher.kind, clusterId };
  }

  /** Forgets a source Secret (`match` found it). @returns its ref. */
  remove(namespace: string, found: { matcher: SourceMatcher; clusterId: string }): SourceRef {
    const ref = { source: found.matcher.kind, clusterId: found.clusterId };
    this.byKey.get(`${ref.source}/${ref.clusterId}`)?.byNs.delete(namespace);
    return ref;
  }

  /** Every kind and cluster seen since the last `clear` (for a relist to report them all). */
  refs(): Map<string, SourceRef> {
    return new Map([...this.byKey].map(([key, { ref }]) => [key, ref]));
  }

  clear(): void {
    this.byKey.clear();
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
