import type { SecretVersionInfo } from '../stores/store.js';

/**
 * The retention planner: pure, no I/O, no clock of its own. Given a secret's versions and `now`, it
 * says which versions to disable and which to destroy (docs/retention.md).
 */

/** How long superseded versions live. */
export interface RetentionPolicy {
  /** Hours a superseded version stays ENABLED after the version that replaced it was written (the overlap). */
  graceHours: number;
  /** Days after it was superseded when a version is destroyed (counted from the same moment as the grace). */
  retentionDays: number;
  /**
   * At most this many versions that are not destroyed, the current one included (versions still in their grace
   * excepted).
   */
  keepVersions: number;
}

/** The defaults that suit a pull secret: a day of overlap, a month of history, five versions. */
export const DEFAULT_RETENTION_POLICY: Readonly<RetentionPolicy> = Object.freeze({
  graceHours: 24,
  retentionDays: 30,
  keepVersions: 5,
});

/**
 * What the planner reads of a version (a `SecretVersionInfo` fits). Lists are newest first, as
 * `describe` returns them: version ids are opaque (GCP numbers them, AWS and Azure do not).
 */
export type VersionView = Pick<SecretVersionInfo, 'version' | 'state' | 'createdTime'>;

/** The version before the current one, as status shows it. */
export interface PreviousVersion {
  version: string;
  /** Its state once the plan is applied. */
  state: 'ENABLED' | 'DISABLED';
  /** ISO 8601 time its grace ends (ended): the version that replaced it was written then plus `graceHours`. */
  graceEndsAt: string;
}

/** What to do now, and when something next falls due. */
export interface RetentionPlan {
  /** Newest ENABLED version; `undefined` when none (then nothing is planned). */
  current: string | undefined;
  /** Newest version below the current one that is not destroyed (after the plan), if any. */
  previous: PreviousVersion | undefined;
  /** Versions to disable, newest first. */
  disable: string[];
  /** Versions to destroy, newest first. */
  destroy: string[];
  /** Versions not destroyed once the plan is applied. */
  remaining: number;
  /** Epoch ms when the next change falls due (a grace or a retention ends); `undefined` when none will. */
  nextDueAt: number | undefined;
  /** Epoch ms when the next grace of an ENABLED version ends (a disable falls due); `undefined` when none will. */
  nextDisableAt: number | undefined;
  /**
   * Each planned version's retire time (epoch ms, in the past): when its change fell due. An ENABLED version: the
   * end of its grace; a DISABLED one: the end of its retention, or for keep-N the later of its grace's end and the
   * newest kept version's write (at the latest). For the retention lag metric.
   */
  dueSince: Readonly<Record<string, number>>;
}

const HOUR_MS = 3_600_000;

/**
 * Plans one retention pass. Rules, for every version older than the current one (the newest
 * ENABLED version), timed from the moment it was superseded (the create time of the next newer version):
 * - within `graceHours`: left alone (the overlap: old and new credential both serve);
 * - after the grace: disabled;
 * - after `retentionDays`: destroyed;
 * - beyond the newest `keepVersions` not-destroyed versions: destroyed once its grace is over.
 * The current version and anything newer (a version someone else disabled) are never touched;
 * destroyed versions are final. Applying the plan and planning again at the same `now` plans
 * nothing (idempotent). A version whose times cannot be read is left alone.
 *
 * @param versions newest first (the order of `describe`)
 * @param currentVersion the version the caller knows is current (the push's); when the list puts an
 *   enabled version before it (Key Vault orders by whole seconds, so two versions of one second may
 *   swap), that one is treated as newer and left alone. Default: the first ENABLED version listed.
 */
export function planRetention(
  versions: readonly VersionView[],
  now: number,
  policy: RetentionPolicy,
  currentVersion?: string,
): RetentionPlan {
  const sorted = versions;
  const known =
    currentVersion === undefined
      ? -1
      : sorted.findIndex((v) => v.version === currentVersion && v.state === 'ENABLED');
  const currentIndex = known >= 0 ? known : sorted.findIndex((v) => v.state === 'ENABLED');
  const current = sorted[currentIndex];
  if (current === undefined)
    return {
      current: undefined,
      previous: undefined,
      disable: [],
      destroy: [],
      remaining: sorted.filter((v) => v.state !== 'DESTROYED').length,
      nextDueAt: undefined,
      nextDisableAt: undefined,
      dueSince: {},
    };

  const graceMs = policy.graceHours * HOUR_MS;
  const retentionMs = policy.retentionDays * 24 * HOUR_MS;
  const disable = new Set<string>();
  const destroy = new Set<string>();
  const graceOver = new Set<string>();
  const graceEnd = new Map<string, number>();
  const dueSince: Record<string, number> = {};
  let nextDueAt: number | undefined;
  let nextDisableAt: number | undefined;
  const due = (at: number) => {
    if (at > now && (nextDueAt === undefined || at < nextDueAt)) nextDueAt = at;
  };

  for (let i = currentIndex + 1; i < sorted.length; i++) {
    const version = sorted[i] as VersionView;
    if (version.state === 'DESTROYED') continue;
    const supersededAt = Date.parse((sorted[i - 1] as VersionView).createdTime);
    if (!Number.isFinite(supersededAt)) continue;
    const graceEndsAt = supersededAt + graceMs;
    const retentionEndsAt = supersededAt + retentionMs;
    graceEnd.set(version.version, graceEndsAt);
    if (now >= graceEndsAt) graceOver.add(version.version);
    if (now >= retentionEndsAt) {
      destroy.add(version.version);
      dueSince[version.version] = version.state === 'ENABLED' ? graceEndsAt : retentionEndsAt;
    } else if (now >= graceEndsAt) {
      if (version.state === 'ENABLED') disable.add(version.version);
      dueSince[version.version] = graceEndsAt;
      due(retentionEndsAt);
    } else {
      due(version.state === 'ENABLED' ? graceEndsAt : retentionEndsAt);
      if (version.state === 'ENABLED') nextDisableAt = Math.min(nextDisableAt ?? graceEndsAt, graceEndsAt);
    }
  }

  // Keep-N: count what stays, newest first; past N, destroy what the plan may touch.
  let kept = 0;
  let newestKeptAt = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < sorted.length; i++) {
    const version = sorted[i] as VersionView;
    if (version.state === 'DESTROYED' || destroy.has(version.version)) continue;
    kept++;
    if (kept > policy.keepVersions && i > currentIndex && graceOver.has(version.version)) {
      destroy.add(version.version);
      disable.delete(version.version);
      // A DISABLED version became excess when a newer one was written: at the latest the newest kept one's write.
      if (version.state !== 'ENABLED')
        dueSince[version.version] = Math.max(graceEnd.get(version.version) ?? now, newestKeptAt);
      kept--;
    } else if (kept === 1 && Number.isFinite(Date.parse(version.createdTime))) {
      newestKeptAt = Date.parse(version.createdTime);
    }
  }

  let previous: PreviousVersion | undefined;
  for (let i = currentIndex + 1; i < sorted.length && previous === undefined; i++) {
    const version = sorted[i] as VersionView;
    const ends = graceEnd.get(version.version);
    if (version.state === 'DESTROYED' || destroy.has(version.version) || ends === undefined) continue;
    const state = version.state === 'ENABLED' && !disable.has(version.version) ? 'ENABLED' : 'DISABLED';
    previous = { version: version.version, state, graceEndsAt: new Date(ends).toISOString() };
  }
  const inOrder = (chosen: ReadonlySet<string>) =>
    sorted.filter((v) => chosen.has(v.version)).map((v) => v.version);
  return {
    current: current.version,
    previous,
    disable: inOrder(disable),
    destroy: inOrder(destroy),
    remaining: kept,
    nextDueAt,
    nextDisableAt,
    dueSince: Object.fromEntries([...disable, ...destroy].map((v) => [v, dueSince[v] as number])),
  };
}

/** The current and previous versions as they are (not as a plan would leave them): for `inspect`. */
interface VersionSummary {
  currentVersion: string | undefined;
  previousVersion: string | undefined;
  previousState: VersionView['state'] | undefined;
  /** ISO 8601: when the version replacing the previous one was written, plus `graceHours`. */
  previousGraceEndsAt: string | undefined;
}

/**
 * Current version (newest ENABLED), previous (newest below it not destroyed) and the end of its grace;
 * `versions` newest first.
 */
export function summarizeVersions(versions: readonly VersionView[], graceHours: number): VersionSummary {
  const sorted = versions;
  const currentIndex = sorted.findIndex((v) => v.state === 'ENABLED');
  const none = {
    currentVersion: undefined,
    previousVersion: undefined,
    previousState: undefined,
    previousGraceEndsAt: undefined,
  };
  if (currentIndex < 0) return none;
  const currentVersion = (sorted[currentIndex] as VersionView).version;
  for (let i = currentIndex + 1; i < sorted.length; i++) {
    const version = sorted[i] as VersionView;
    if (version.state === 'DESTROYED') continue;
    const supersededAt = Date.parse((sorted[i - 1] as VersionView).createdTime);
    const graceEndsAt = Number.isFinite(supersededAt)
      ? new Date(supersededAt + graceHours * HOUR_MS).toISOString()
      : undefined;
    return {
      currentVersion,
      previousVersion: version.version,
      previousState: version.state,
      previousGraceEndsAt: graceEndsAt,
    };
  }
  return { ...none, currentVersion };
}
