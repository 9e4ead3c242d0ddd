import { toPullSecretError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { isManaged } from '../pullsecret/identifiers.js';
import type { SecretStore } from '../stores/store.js';
import { withRetry, type RetryPolicy } from '../util/retry.js';
import type { RetentionLagSource, RetentionObserver } from './metrics.js';
import { planRetention, type PreviousVersion, type RetentionPolicy } from './plan.js';

/** What a reconcile reports about the secret's versions (status `data`, `inspect`). */
interface RetentionView {
  currentVersion: string;
  previous?: PreviousVersion;
}

interface RetentionRunnerOptions {
  policy: RetentionPolicy;
  retry: RetryPolicy;
  /** Epoch ms; tests pass a controllable clock. */
  clock?: () => number;
  /** Version changes one pass makes at most; the rest fall due at once (the next reconcile goes on). Default 10. */
  maxChangesPerPass?: number;
  /** How long after a failed pass the next one may list again. Default a minute. */
  failureBackoffMs?: number;
  observer?: RetentionObserver;
}

/** One pass's input: the secret the reconcile pushed, and whether the push wrote. */
interface RetentionInput {
  secretId: string;
  clusterId: string;
  /** The version the push left current (newest enabled). */
  currentVersion: string;
  /** The push added a version (`created` or `updated`). */
  wrote: boolean;
}

interface Known {
  currentVersion: string;
  /** Epoch ms of the next change due; `undefined`: none until the next write. */
  dueAt: number | undefined;
  view: RetentionView;
}

/**
 * What one pass learnt of what is left to retire: set once it listed the versions (`late`: each change it
 * planned and has not made yet, with its retire time; `nextDueAt`: the next one to fall due).
 */
interface Progress {
  late?: Map<string, number>;
  nextDueAt?: number;
}

const DEFAULT_MAX_CHANGES = 10;
const DEFAULT_FAILURE_BACKOFF_MS = 60_000;

/**
 * Applies the retention plan as part of reconciles (no cron of its own). A no-op reconcile costs
 * nothing here: the secret's versions are listed (`describe`: GCP GetSecret + ListSecretVersions,
 * one read token) only after a write, after a restart (the first reconcile of a secret), or once
 * the due time kept in memory has passed. Each change is one store write, taken from the same
 * write-quota bucket as pushes (the store the adapter hands over is paced), at most
 * `maxChangesPerPass` per pass. A secret not labelled `managed-by=hyperfleet` for this cluster is
 * never changed; a store without `disableVersion` is skipped, and one without `destroyVersion`
 * (Azure Key Vault, AWS Secrets Manager) only disables. A version the store keeps serving after
 * `disableVersion` (AWS: a staging label that is not ours) is logged as kept, not counted.
 *
 * Never throws: a failure is logged, counted (`pullsecret_retention_failures_total`) and retried
 * by a later reconcile; the reconcile's own result stands.
 *
 * The lag (`lagSeconds`, `pullsecret_retention_lag_seconds`) comes from the same memory: per secret, the
 * earliest retire time of a version not retired yet as far as the last pass saw (a failed or unmade
 * change, or the next due time, which counts once it passes without a pass).
 */
export class RetentionRunner implements RetentionLagSource {
  readonly #known = new Map<string, Known>();
  /** Secrets with something left to retire: their store kind and earliest retire time (epoch ms). */
  readonly #pending = new Map<string, { store: string; at: number }>();
  readonly #clock: () => number;
  readonly graceSeconds: number;

  constructor(private readonly options: RetentionRunnerOptions) {
    this.#clock = options.clock ?? Date.now;
    this.graceSeconds = options.policy.graceHours * 3600;
    options.observer?.watch(this);
  }

  /**
   * By store kind, seconds since the earliest retire time passed among the secrets this runner knows
   * (a store without one is absent). O(secrets with something left to retire); no store call.
   */
  lagSeconds(): ReadonlyMap<string, number> {
    const now = this.#clock();
    const lag = new Map<string, number>();
    for (const { store, at } of this.#pending.values())
      lag.set(store, Math.max(lag.get(store) ?? 0, Math.max(0, now - at) / 1000));
    return lag;
  }

  /**
   * Runs one pass when one is due; returns what is known of the versions (nothing for a store without the
   * lifecycle).
   */
  async afterReconcile(
    store: SecretStore,
    input: RetentionInput,
    log: Logger,
    signal?: AbortSignal,
  ): Promise<RetentionView | undefined> {
    if (store.disableVersion === undefined) return undefined;
    const key = `${store.kind}|${store.secretPath(input.secretId)}`;
    const now = this.#clock();
    const known = this.#known.get(key);
    if (
      !input.wrote &&
      known !== undefined &&
      known.currentVersion === input.currentVersion &&
      (known.dueAt === undefined || now < known.dueAt)
    ) {
      return known.view;
    }
    const fallback: RetentionView =
      known?.currentVersion === input.currentVersion ? known.view : { currentVersion: input.currentVersion };
    const progress: Progress = {};
    try {
      const result = await this.#pass(store, input, log, now, signal, progress);
      this.#known.set(key, { currentVersion: input.currentVersion, ...result });
      return result.view;
    } catch (err) {
      const error = toPullSecretError(err);
      this.options.observer?.failed(store.kind);
      log.warn(
        { operation: 'retention', error_code: error.code, err: error },
        'Retention pass failed; retried at a later reconcile',
      );
      this.#known.set(key, {
        currentVersion: input.currentVersion,
        dueAt: now + (this.options.failureBackoffMs ?? DEFAULT_FAILURE_BACKOFF_MS),
        view: fallback,
      });
      return fallback;
    } finally {
      this.#record(key, store.kind, progress);
    }
  }

  /** Forgets a secret (its cluster was deleted). */
  forget(store: SecretStore, secretId: string): void {
    const key = `${store.kind}|${store.secretPath(secretId)}`;
    this.#known.delete(key);
    this.#pending.delete(key);
  }

  /** Keeps a pass's earliest retire time left; a pass that could not list keeps what was known before. */
  #record(key: string, store: string, progress: Progress): void {
    if (progress.late === undefined) return;
    const times = [...progress.late.values()];
    if (progress.nextDueAt !== undefined) times.push(progress.nextDueAt);
    if (times.length === 0) this.#pending.delete(key);
    else this.#pending.set(key, { store, at: Math.min(...times) });
  }

  async #pass(
    store: SecretStore,
    input: RetentionInput,
    log: Logger,
    now: number,
    signal: AbortSignal | undefined,
    progress: Progress,
  ): Promise<{ dueAt: number | undefined; view: RetentionView }> {
    const { retry, policy, observer } = this.options;
    const call = { signal };
    const described = await withRetry(retry, () => store.describe(input.secretId, call), { signal });
    // Listed: from here on what is left to retire is known (nothing, for a missing or unmanaged secret).
    const late = (progress.late = new Map<string, number>());
    const bare = { dueAt: undefined, view: { currentVersion: input.currentVersion } };
    if (described === undefined) return bare;
    if (!isManaged(described.labels) || described.labels['cluster-id'] !== input.clusterId) {
      log.info(
        { operation: 'retention', secret_path: described.path },
        'Secret is not managed for this cluster; retention leaves it alone',
      );
      return bare;
    }
    const plan = planRetention(described.versions, now, policy, input.currentVersion);
    const max = this.options.maxChangesPerPass ?? DEFAULT_MAX_CHANGES;
    // A store that cannot destroy (Azure Key Vault) only disables: what is due for destruction is disabled if it
    // is not yet.
    const canDestroy = store.destroyVersion !== undefined;
    const enabled = new Set(described.versions.filter((v) => v.state === 'ENABLED').map((v) => v.version));
    const disable = canDestroy
      ? plan.disable
      : [...plan.disable, ...plan.destroy.filter((v) => enabled.has(v))];
    const destroy = canDestroy ? plan.destroy : [];
    // Disables first: retiring a superseded credential matters more than freeing its storage.
    const changes = [
      ...disable.map((v) => ['disable', v] as const),
      ...destroy.map((v) => ['destroy', v] as const),
    ];
    const batch = changes.slice(0, max);
    for (const [, version] of changes) late.set(version, plan.dueSince[version] ?? now);
    // Without destroy, a retention's end retires nothing: only the next grace's end is a retire time.
    progress.nextDueAt = canDestroy ? plan.nextDueAt : plan.nextDisableAt;
    for (const [action, version] of batch) {
      const started = performance.now();
      if (action === 'disable') {
        const after = await withRetry(
          retry,
          () =>
            (store.disableVersion as NonNullable<SecretStore['disableVersion']>)(
              input.secretId,
              version,
              call,
            ),
          { signal },
        );
        if (after.state === 'ENABLED') {
          // The store left it served: labels that are not ours hold it (AWS: AWSPENDING or a custom staging label).
          log.info(
            { operation: 'retention-disable', version },
            'Kept a superseded version: the store serves it for someone else',
          );
          late.delete(version);
          continue;
        }
        observer?.disabled(store.kind);
      } else {
        await withRetry(
          retry,
          () =>
            (store.destroyVersion as NonNullable<SecretStore['destroyVersion']>)(
              input.secretId,
              version,
              call,
            ),
          { signal },
        );
        observer?.destroyed(store.kind);
      }
      late.delete(version);
      log.info(
        { operation: `retention-${action}`, version, duration_ms: Math.round(performance.now() - started) },
        action === 'disable' ? 'Disabled a superseded version' : 'Destroyed a retired version',
      );
    }
    const all = batch.length === changes.length;
    const destroyed = batch.filter(([action]) => action === 'destroy').length;
    observer?.versions(store.kind, plan.remaining + (plan.destroy.length - destroyed));
    const view: RetentionView = {
      currentVersion: plan.current ?? input.currentVersion,
      ...(plan.previous === undefined ? {} : { previous: plan.previous }),
    };
    return { dueAt: all ? plan.nextDueAt : now, view };
  }
}
