/*
 * The core (src/reconcile) and its two plug-in points. A reconcile (`reconcilePullSecret`) runs an
 * ordered list of `ReconcileStep`s; the event pipeline (`EventPipeline`) tells its
 * `PipelinePlugin`s (pipeline-plugin.ts) of clusters read, versions written and reports to make.
 * `resolveCluster` resolves a cluster once; `decide` (outcome-table.ts) maps every outcome to its
 * disposition, metric and report. The core imports no feature folder: the features register from
 * their own folders and the adapter (and the Job) wire them, one line each.
 */
import type { Logger } from '../observability/logger.js';
import type { ClusterNames } from '../pullsecret/cluster-names.js';
import type { PinFacts } from '../pullsecret/pin-facts.js';
import type { ValidateOptions } from '../pullsecret/validate.js';
import type { PushResult } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';

/**
 * The registry verification of a new pull secret, as the status and the Job's result carry it:
 * the mode and each registry's outcome by `auths` key (docs/verification.md).
 */
export interface VerificationFacts {
  mode: 'warn' | 'enforce';
  results: Record<string, string>;
}

/** The current and previous versions when retention runs for the store (docs/retention.md). */
export interface VersionFacts {
  currentVersion: string;
  previous?: { version: string; state: string; graceEndsAt: string };
}

/** The applied ownership transfer merged into the spec's pull secret (docs/account-service.md). */
interface TransferFacts {
  transferId: string;
  appliedAt: string;
}

export type { PinFacts } from '../pullsecret/pin-facts.js';

/** What steps add to a reconcile's result, for the status data and the Job's result file. */
export interface ReconcileFacts {
  transfer?: TransferFacts;
  verification?: VerificationFacts;
  retention?: VersionFacts;
  /**
   * Only on a failure before any write (a `beforeWrite` refused the new pull secret): the store's newest
   * enabled version, still served (status `currentVersion`; `factsOf` in failure-facts.ts).
   */
  servedVersion?: string;
  pin?: PinFacts;
}

/** What every step of one reconcile sees: frozen, the names checked once before the first call. */
export interface StepContext {
  readonly store: SecretStore;
  readonly names: ClusterNames;
  /** The pull secret as the reconcile was given it (the spec's), validated, before any step changed it. */
  readonly spec: Buffer;
  readonly dryRun: boolean;
  /** The store's per-version limit, for a step that changes the payload. */
  readonly limits: ValidateOptions;
  readonly log: Logger;
  readonly signal?: AbortSignal;
  /** Masks a credential in every log line and error until the reconcile ends. */
  registerCredentials(document: string): void;
}

/**
 * One plug-in step of the reconcile (`reconcilePullSecret`), in the order given. The core calls
 * each hook it has and knows nothing else of it; a throw stops the reconcile (a failed outcome).
 * Each hook returns the facts it adds to the result, or nothing; a hook that throws may attach its
 * facts to the error (`withFacts`, failure-facts.ts), and the core adds the facts gathered before.
 */
export interface ReconcileStep {
  /**
   * Before the store is read or written: may replace the payload (the applied-transfer merge).
   * `final`: no later step's `preparePayload` runs (a rollback pin serves its content as it is).
   */
  preparePayload?(
    ctx: StepContext,
    payload: Buffer,
  ): Promise<{ payload: Buffer; facts?: ReconcileFacts; final?: boolean }>;
  /** Only when a new version would be written, before it is (the registry verification). */
  beforeWrite?(ctx: StepContext, payload: Buffer): Promise<ReconcileFacts | undefined>;
  /** After the store push and the Kubernetes Secret (retention retires superseded versions). */
  afterProvision?(ctx: StepContext, pushed: PushResult): Promise<ReconcileFacts | undefined>;
  /** The cluster's secrets were removed (retention forgets its due time). */
  onFinalize?(store: SecretStore, secretId: string): void;
}
