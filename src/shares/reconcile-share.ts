/**
 * The reconcile of one PullSecretShare: its consumer namespaces, the access review of each
 * consumer's service accounts (cached), the copy of the source Secret (its kind's row of
 * source-kinds.ts: the pull secret or the entitlement bundle) in each granted namespace, its
 * imagePullSecrets entries, the removal of copies no longer granted, and the share's status.
 * The watch loop that decides when a share is reconciled is controller.ts.
 */
import { describeError, toPullSecretError } from '../errors/index.js';
import { MANAGED_BY } from '../pullsecret/identifiers.js';
import type { ShareApi, SecretObject } from '../kube/share-api.js';
import type { ShareState, SourceSecret } from '../kube/share-state.js';
import type { RemovalReason, ShareMetrics } from './metrics.js';
import { matchesSelector } from './selector.js';
import { buildStatus, sameStatus, summarize, type ReadyReason } from './status.js';
import {
  SHARE_API_VERSION,
  SHARE_CONTENT_ANNOTATION,
  SHARE_KIND,
  SHARE_LABEL,
  type ConsumerStatus,
  type ShareObject,
  type ShareSpec,
} from '../kube/share-types.js';
import { parseShareSpec } from './validate.js';
import { SOURCE_KINDS } from './source-kinds.js';
import { forEachLimited } from '../util/for-each-limited.js';

/** The logger shape used (pino's fits). Fields never carry Secret data. */
interface ShareLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/** What the reconcile of a share needs besides the cluster. */
export interface ShareReconcileOptions {
  metrics: ShareMetrics;
  logger: ShareLogger;
  /** Consumers of one share reconciled at once; default 8. */
  concurrency?: number;
}

/** A consumer namespace's status, or undefined for one left out. */
type Consumer = ConsumerStatus | undefined;

/** What was last reconciled of a share: its uid, and its spec when it was valid. */
interface Known {
  uid: string;
  spec?: ShareSpec;
}

/** Reconciles one share at a time against the watched state; holds the caches between reconciles. */
export class ShareReconciler {
  /** `{share}/{namespace}/{sa}` → allowed. */
  readonly access = new Map<string, boolean>();
  /** `{namespace}/{sa}/{secret}` entries known to be in a service account's imagePullSecrets. */
  private readonly pullSecretEntries = new Set<string>();
  /** `{namespace}/{name}` → uid of the share that found a foreign Secret there. */
  readonly conflicts = new Map<string, string>();
  /** Shares reconciled so far, by name. */
  readonly known = new Map<string, Known>();
  private readonly concurrency: number;

  constructor(
    private readonly state: ShareState,
    private readonly api: ShareApi,
    private readonly options: ShareReconcileOptions,
  ) {
    this.concurrency = options.concurrency ?? 8;
  }

  /** Makes the share `name` (or its absence) true in the cluster, and its status say so. */
  async reconcile(name: string): Promise<void> {
    const share = this.state.shares.get(name);
    const previous = this.known.get(name);
    if (share === undefined) {
      if (previous !== undefined) await this.removeCopies(name, previous, new Set(), 'share-deleted');
      this.known.delete(name);
      return;
    }
    if (previous !== undefined && previous.uid !== share.uid)
      await this.removeCopies(name, previous, new Set(), 'share-deleted');
    const parsed = parseShareSpec(share.spec, name);
    if ('problem' in parsed) {
      await this.removeCopies(name, { uid: share.uid, spec: previous?.spec }, new Set(), 'invalid');
      this.known.set(name, { uid: share.uid });
      await this.report(share, parsed.problem.reason, parsed.problem.message, []);
      return;
    }
    const spec = parsed.spec;
    this.known.set(name, { uid: share.uid, spec });
    if (previous?.uid === share.uid && previous.spec !== undefined)
      await this.dropStaleEntries(name, share.uid, previous.spec, spec);
    const source = this.state.source(spec.source.kind, spec.source.clusterId);
    if (source === undefined) {
      await this.removeCopies(name, { uid: share.uid, spec }, new Set(), 'source-deleted');
      const kind = SOURCE_KINDS[spec.source.kind];
      const id = spec.source.clusterId;
      await this.report(
        share,
        'SourceNotFound',
        `the ${kind.noun} Secret ${kind.secretName(id)} of cluster ${id} was not found`,
        [],
      );
      return;
    }
    const found: Consumer[] = [];
    await forEachLimited(this.consumerNamespaces(spec), this.concurrency, async (ns, i) => {
      found[i] = await this.consumer(share, spec, source, ns);
    });
    const consumers = found.filter((c) => c !== undefined);
    const granted = new Set(consumers.filter((c) => c.result === 'granted').map((c) => c.namespace));
    await this.removeCopies(name, { uid: share.uid, spec }, granted, 'unselected', spec.target.secretName);
    const failed = consumers.some((c) => c.result === 'conflict' || c.result === 'error');
    await this.report(share, failed ? 'ConsumersFailed' : 'Projected', summarize(consumers), consumers);
  }

  /**
   * Namespaces named (existing or not) and existing namespaces the selector matches, sorted; not the
   * ones being deleted (nothing new can be created there, and their copies go with them).
   */
  private consumerNamespaces(spec: ShareSpec): string[] {
    const out = new Set(spec.consumers.namespaces ?? []);
    const selector = spec.consumers.namespaceSelector;
    if (selector !== undefined)
      for (const [ns, labels] of this.state.namespaces) if (matchesSelector(selector, labels)) out.add(ns);
    return [...out].filter((ns) => !this.state.terminating.has(ns)).sort();
  }

  private async mayUse(share: string, namespace: string, sa: string): Promise<boolean> {
    const key = `${share}/${namespace}/${sa}`;
    const cached = this.access.get(key);
    if (cached !== undefined) return cached;
    const allowed = await this.api.mayUse(share, namespace, sa);
    if (!allowed) this.options.metrics.denials.inc();
    this.access.set(key, allowed);
    return allowed;
  }

  /** One consumer namespace's result; undefined for a namespace found being deleted (its watch event follows). */
  private async consumer(
    share: ShareObject,
    spec: ShareSpec,
    source: SourceSecret,
    namespace: string,
  ): Promise<Consumer> {
    const secretName = spec.target.secretName;
    try {
      if (!this.state.namespaces.has(namespace))
        return { namespace, result: 'error', message: `namespace ${namespace} not found` };
      const allowed: string[] = [];
      const denied: string[] = [];
      for (const sa of spec.consumers.serviceAccounts)
        ((await this.mayUse(share.name, namespace, sa)) ? allowed : denied).push(sa);
      if (allowed.length === 0) {
        await this.removeCopy(share, spec, namespace, secretName, 'revoked');
        return { namespace, result: 'denied', deniedServiceAccounts: denied };
      }
      const conflict = await this.ensureCopy(share, source, namespace, secretName);
      if (conflict !== undefined) return { namespace, result: 'conflict', secretName, message: conflict };
      const missing: string[] = [];
      if (spec.target.imagePullSecrets) {
        for (const sa of allowed)
          if ((await this.ensureEntry(namespace, sa, secretName)) === 'missing') missing.push(sa);
        for (const sa of denied) await this.dropEntry(namespace, sa, secretName, false);
      }
      const status: ConsumerStatus = { namespace, result: 'granted', secretName };
      if (denied.length > 0) status.deniedServiceAccounts = denied;
      if (missing.length > 0)
        status.message = `service account ${missing.join(', ')} not found: imagePullSecrets not updated`;
      return status;
    } catch (err) {
      const e = toPullSecretError(err);
      // A 403 from the NamespaceLifecycle admission (src/kube/errors.ts): the namespace is going, not failing.
      if (e.code === 'NAMESPACE_NOT_FOUND' && this.state.namespaces.has(namespace)) return undefined;
      this.options.logger.warn(
        { operation: 'share', share: share.name, namespace, ...describeError(e) },
        'Share consumer failed',
      );
      return { namespace, result: 'error', message: e.message };
    }
  }

  /** The copy of the source Secret the share owns in `namespace`. */
  private desiredCopy(
    share: ShareObject,
    source: SourceSecret,
    namespace: string,
    name: string,
    resourceVersion?: string,
  ): SecretObject {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
        labels: { [MANAGED_BY.key]: MANAGED_BY.value, [SHARE_LABEL]: share.name },
        annotations: { [SHARE_CONTENT_ANNOTATION]: source.sha256 },
        ownerReferences: [
          {
            apiVersion: SHARE_API_VERSION,
            kind: SHARE_KIND,
            name: share.name,
            uid: share.uid,
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
      },
      type: source.type,
      data: { ...source.data },
    };
  }

  /**
   * Makes the copy match the source.
   * @returns a conflict message when a Secret the share does not own is in the way.
   */
  private async ensureCopy(
    share: ShareObject,
    source: SourceSecret,
    namespace: string,
    name: string,
  ): Promise<string | undefined> {
    const key = `${namespace}/${name}`;
    const foreign = `a Secret ${name} not owned by this share exists in ${namespace}; it is left untouched`;
    const existing = this.state.copy(namespace, name);
    if (existing !== undefined && !existing.ownerUids.includes(share.uid)) return foreign;
    if (existing === undefined && this.conflicts.get(key) === share.uid) return foreign;
    if (
      existing !== undefined &&
      existing.sha256 === source.sha256 &&
      existing.type === source.type &&
      existing.share === share.name
    )
      return undefined;
    const log = (outcome: string) =>
      this.options.logger.info(
        { operation: 'share', share: share.name, source: source.kind, namespace, secret: name, outcome },
        'Shared Secret projected',
      );
    if (existing === undefined) {
      const created = await this.api.createCopy(this.desiredCopy(share, source, namespace, name));
      if (created !== undefined) {
        this.state.observeSecret(created);
        this.options.metrics.projections.inc({ outcome: 'created' });
        log('created');
        return undefined;
      }
      const owners = await this.api.readOwners(namespace, name);
      // Ours but not yet seen by the watch: its event brings it, and the next reconcile compares.
      if (owners !== undefined && owners.ownerUids.includes(share.uid)) return undefined;
      this.conflicts.set(key, share.uid);
      return foreign;
    }
    if (existing.type !== source.type) {
      // The type of a Secret cannot change: the copy is made again.
      await this.api.deleteCopy(namespace, name, existing.uid);
      this.state.observeSecret(undefined, { namespace, name });
      return this.ensureCopy(share, source, namespace, name);
    }
    const updated = await this.api.replaceCopy(
      this.desiredCopy(share, source, namespace, name, existing.resourceVersion),
    );
    if (updated === undefined) return undefined;
    this.state.observeSecret(updated);
    this.options.metrics.projections.inc({ outcome: 'updated' });
    log('updated');
    return undefined;
  }

  private async ensureEntry(
    namespace: string,
    sa: string,
    secretName: string,
  ): Promise<'present' | 'missing'> {
    const key = `${namespace}/${sa}/${secretName}`;
    if (this.pullSecretEntries.has(key)) return 'present';
    const result = await this.api.addImagePullSecret(namespace, sa, secretName);
    if (result === 'present') this.pullSecretEntries.add(key);
    return result;
  }

  /** Removes the entry: when known to be there, or (`always`) after the copy itself was removed. */
  private async dropEntry(namespace: string, sa: string, secretName: string, always: boolean): Promise<void> {
    const key = `${namespace}/${sa}/${secretName}`;
    if (!always && !this.pullSecretEntries.has(key)) return;
    await this.api.removeImagePullSecret(namespace, sa, secretName);
    this.pullSecretEntries.delete(key);
  }

  /**
   * Takes out the imagePullSecrets entries the previous spec added that this one no longer wants
   * (turned off, e.g. by a switch to an entitlement, which is no registry credential; the copy renamed;
   * a service account no longer listed). Nothing to do, and no call, while the spec is unchanged.
   */
  private async dropStaleEntries(name: string, uid: string, before: ShareSpec, after: ShareSpec) {
    if (!before.target.imagePullSecrets) return;
    const sameCopy = after.target.imagePullSecrets && after.target.secretName === before.target.secretName;
    const stale = before.consumers.serviceAccounts.filter(
      (sa) => !sameCopy || !after.consumers.serviceAccounts.includes(sa),
    );
    if (stale.length === 0) return;
    const copies = this.state.copiesOf(name).filter((c) => c.ownerUids.includes(uid));
    await forEachLimited(copies, this.concurrency, async (c) => {
      for (const sa of stale) await this.dropEntry(c.namespace, sa, c.name, true);
    });
  }

  /** Deletes the share's copy in a namespace (only one it owns) and its imagePullSecrets entries. */
  private async removeCopy(
    share: { name: string; uid: string },
    spec: ShareSpec | undefined,
    namespace: string,
    name: string,
    reason: RemovalReason,
  ): Promise<void> {
    const copy = this.state.copy(namespace, name);
    if (copy === undefined || !copy.ownerUids.includes(share.uid)) return;
    if (await this.api.deleteCopy(namespace, name, copy.uid)) {
      this.options.metrics.removals.inc({ reason });
      this.options.logger.info(
        { operation: 'share', share: share.name, source: spec?.source.kind, namespace, secret: name, reason },
        'Shared Secret copy removed',
      );
    }
    this.state.observeSecret(undefined, { namespace, name });
    if (spec?.target.imagePullSecrets === true)
      for (const sa of spec.consumers.serviceAccounts) await this.dropEntry(namespace, sa, name, true);
  }

  /** Removes every copy owned by the share outside `keep` (namespaces), or with another name than `keepName`. */
  private async removeCopies(
    name: string,
    known: Known,
    keep: ReadonlySet<string>,
    reason: RemovalReason,
    keepName?: string,
  ): Promise<void> {
    const stale = this.state
      .copiesOf(name)
      .filter((c) => c.ownerUids.includes(known.uid) && !(keep.has(c.namespace) && c.name === keepName));
    await forEachLimited(stale, this.concurrency, (c) =>
      this.removeCopy({ name, uid: known.uid }, known.spec, c.namespace, c.name, reason),
    );
  }

  private async report(
    share: ShareObject,
    reason: ReadyReason,
    message: string,
    consumers: ConsumerStatus[],
  ): Promise<void> {
    const status = buildStatus({
      generation: share.generation,
      previous: share.status,
      reason,
      message,
      consumers,
    });
    if (sameStatus(share.status, status)) return;
    if (await this.api.writeStatus(share.name, status)) {
      // Until the watch brings the new version, the next reconcile compares with what was written.
      const current = this.state.shares.get(share.name);
      if (current !== undefined && current.uid === share.uid)
        this.state.shares.set(share.name, { ...current, status });
      this.options.logger.debug({ operation: 'share', share: share.name, reason }, 'Share status written');
    }
  }
}
