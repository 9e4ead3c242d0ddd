import { failureReason, type ErrorCode } from '../errors/index.js';
import type { AdapterStatusReport, ConditionRequest } from '../hyperfleet/types.js';
import { scopeStatusData } from '../stores/registry.js';
import type { PinFacts, ReconcileFacts, VerificationFacts, VersionFacts } from './steps.js';
import { factsOf } from './failure-facts.js';
import type { StatusAddition } from './pipeline-plugin.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';

/** The adapter's name in status reports. */
export const ADAPTER_NAME = 'pullsecret';

/**
 * Errors caused by the cluster's own data: the adapter itself is healthy (Health=True), the cluster
 * needs fixing. Everything else (store, API, Kubernetes, permissions) marks Health=False.
 */
const INPUT_ERRORS: ReadonlySet<ErrorCode> = new Set([
  'PULL_SECRET_INVALID',
  'PAYLOAD_TOO_LARGE',
  'IDENTIFIER_INVALID',
  'SECRET_UNMANAGED',
  'CREDENTIALS_REJECTED',
]);

/** Failures whose own reason is also `Available`'s: the registry verification (docs/verification.md). */
const AVAILABILITY_ERRORS: ReadonlySet<ErrorCode> = new Set(['CREDENTIALS_REJECTED', 'REGISTRY_UNREACHABLE']);

const HEALTHY: ConditionRequest = {
  type: 'Health',
  status: 'True',
  reason: 'Healthy',
  message: 'Adapter functioning normally',
};
const APPLIED_REASON = {
  created: 'SecretCreated',
  updated: 'SecretUpdated',
  unchanged: 'SecretUpToDate',
} as const;
/** Applied's reason while a rollback pin holds: the spec's pull secret is not what is served (docs/retention.md). */
const PINNED_REASON = 'RolledBackPinned';

function condition(
  type: string,
  status: ConditionRequest['status'],
  reason: string,
  message: string,
): ConditionRequest {
  return { type, status, reason, message };
}

function targetData(target: WorkTarget | undefined): Record<string, unknown> {
  if (target === undefined) return {};
  return {
    secretName: target.secretName,
    store: target.store,
    // Where the store keeps it (`location`), plus what the store declares (GCP: `gcpProject`, docs/status-contract.md).
    ...scopeStatusData(target.store, target.settings),
    kubernetesSecret: { namespace: target.namespace, name: target.kubernetesSecretName },
  };
}

/** The applied ownership transfer, when the reconcile merged one (docs/account-service.md). */
function transferData(
  transfer: { transferId: string; appliedAt: string } | undefined,
): Record<string, string> {
  return transfer === undefined
    ? {}
    : { transferId: transfer.transferId, transferAppliedAt: transfer.appliedAt };
}

/**
 * Adds the current version, and the previous one with the end of its grace, when retention runs
 * (docs/retention.md).
 */
function addVersionData(
  data: Record<string, unknown>,
  result: { version?: string | undefined; retention?: VersionFacts | undefined },
): void {
  if (result.version !== undefined) data.currentVersion = result.retention?.currentVersion ?? result.version;
  const previous = result.retention?.previous;
  if (previous === undefined) return;
  data.previousVersion = previous.version;
  data.previousVersionState = previous.state;
  data.previousGraceEndsAt = previous.graceEndsAt;
}

/** `registryVerification` in the status data: the mode and each registry's outcome (docs/verification.md). */
function verificationData(verification: VerificationFacts | undefined): Record<string, unknown> {
  return verification === undefined ? {} : { registryVerification: verification };
}

/**
 * What a failure found before it (docs/verification.md): the registry verification, and the version
 * still served when the new pull secret was refused before any write (`currentVersion`).
 */
function failureData(facts: Readonly<ReconcileFacts>): Record<string, unknown> {
  return {
    ...(facts.servedVersion === undefined ? {} : { currentVersion: facts.servedVersion }),
    ...verificationData(facts.verification),
  };
}

/** The note that the version before a refused pull secret is still served. */
function servedNote(facts: Readonly<ReconcileFacts>): string {
  return facts.servedVersion === undefined ? '' : `; version ${facts.servedVersion} is still served`;
}

/**
 * The Applied message's note on registries that did not accept (warn mode writes anyway); the Job's
 * completion message carries the same note.
 */
export function verificationNote(verification: VerificationFacts | undefined): string {
  if (verification === undefined) return '';
  const failed = Object.entries(verification.results).filter(
    ([, outcome]) => outcome === 'rejected' || outcome === 'unreachable',
  );
  if (failed.length === 0) return '';
  const named = failed.map(([registry, outcome]) => `${registry} ${outcome}`).join(', ');
  return `; registry verification (${verification.mode}): ${named}`;
}

/**
 * `data` of an applied reconcile, built in place (every no-op reconcile reports one): the target,
 * the secret's path, version and outcome, then the transfer, version and verification fields.
 */
function appliedData(
  target: WorkTarget,
  result: Extract<WorkOutcome, { kind: 'applied' }>['result'],
): Record<string, unknown> {
  const data = targetData(target);
  data.secretPath = result.secretPath;
  data.secretVersion = result.version;
  data.versionPath = result.versionPath;
  data.outcome = result.outcome;
  Object.assign(data, transferData(result.transfer));
  addVersionData(data, result);
  if (result.verification !== undefined) data.registryVerification = result.verification;
  if (result.pin !== undefined) data.pin = result.pin;
  return data;
}

/** The Applied message's note on a rollback pin: which version is served instead of the spec's. */
function pinNote(pin: PinFacts | undefined): string {
  if (pin === undefined) return '';
  const until = pin.expiresAt === undefined ? '' : ` until ${pin.expiresAt}`;
  return `; rolled back to version ${pin.sourceVersion}'s content, pinned by ${pin.by}${until}`;
}

/** Conditions and data for each outcome (docs/status-contract.md). */
function describe(outcome: WorkOutcome): { conditions: ConditionRequest[]; data: Record<string, unknown> } {
  switch (outcome.kind) {
    case 'applied': {
      const { result, target } = outcome;
      const k8s = result.kubernetes
        ? `; Kubernetes Secret ${result.kubernetes.namespace}/${result.kubernetes.name} ${result.kubernetes.outcome}`
        : '';
      const verified = verificationNote(result.verification);
      return {
        conditions: [
          condition(
            'Applied',
            'True',
            result.pin === undefined ? APPLIED_REASON[result.outcome] : PINNED_REASON,
            `Pull secret ${result.outcome} in the ${target.store} store${k8s}${verified}${pinNote(result.pin)}`,
          ),
          condition(
            'Available',
            'True',
            'SecretAvailable',
            `Version ${result.version ?? '?'} of ${result.secretPath} is available`,
          ),
          HEALTHY,
        ],
        data: appliedData(target, result),
      };
    }
    case 'skipped':
      // Waiting is not failing: nothing was tried, so whether the secret is available is not known.
      return {
        conditions: [
          condition('Applied', 'False', 'PreconditionNotMet', `Skipped: ${outcome.message}`),
          condition(
            'Available',
            'Unknown',
            'PreconditionNotMet',
            'Not provisioned until the preconditions are met',
          ),
          HEALTHY,
        ],
        data: { precondition: outcome.precondition },
      };
    case 'failed': {
      const reason = failureReason(outcome.error.code);
      const facts = factsOf(outcome.error);
      const served = servedNote(facts);
      const health = INPUT_ERRORS.has(outcome.error.code)
        ? HEALTHY
        : condition('Health', 'False', reason, outcome.error.message);
      return {
        conditions: [
          condition('Applied', 'False', reason, outcome.error.message),
          AVAILABILITY_ERRORS.has(outcome.error.code)
            ? condition(
                'Available',
                'False',
                reason,
                `The new pull secret is not provisioned: ${outcome.error.message}${served}`,
              )
            : condition(
                'Available',
                'False',
                'SecretNotReady',
                `The pull secret is not provisioned${served}`,
              ),
          health,
        ],
        data: { ...targetData(outcome.target), errorCode: outcome.error.code, ...failureData(facts) },
      };
    }
    case 'job-running':
      return {
        conditions: [
          condition(
            'Applied',
            'True',
            'JobInProgress',
            `Job ${outcome.jobNamespace}/${outcome.jobName} is running`,
          ),
          condition('Available', 'False', 'JobInProgress', 'Waiting for the Job to finish'),
          HEALTHY,
        ],
        data: { ...targetData(outcome.target), jobName: outcome.jobName },
      };
    case 'job-succeeded': {
      // What the Job's pod reported (docs/status-contract.md): the same version and verification data as in-process.
      const report = outcome.report;
      const verification = report?.registryVerification;
      const versions = {
        ...(report?.currentVersion === undefined ? {} : { currentVersion: report.currentVersion }),
        ...(report?.previousVersion === undefined ? {} : { previousVersion: report.previousVersion }),
        ...(report?.previousVersionState === undefined
          ? {}
          : { previousVersionState: report.previousVersionState }),
        ...(report?.previousGraceEndsAt === undefined
          ? {}
          : { previousGraceEndsAt: report.previousGraceEndsAt }),
      };
      return {
        conditions: [
          condition(
            'Applied',
            'True',
            report?.pin === undefined ? 'JobSucceeded' : PINNED_REASON,
            `Job ${outcome.jobNamespace}/${outcome.jobName} completed${verificationNote(verification)}` +
              pinNote(report?.pin),
          ),
          condition(
            'Available',
            'True',
            'SecretAvailable',
            'The pull secret was stored and provisioned by the Job',
          ),
          HEALTHY,
        ],
        data: {
          ...targetData(outcome.target),
          jobName: outcome.jobName,
          ...versions,
          ...verificationData(verification),
          ...(report?.pin === undefined ? {} : { pin: report.pin }),
        },
      };
    }
    case 'job-failed':
      return {
        conditions: [
          condition(
            'Applied',
            'False',
            'JobFailed',
            `Job ${outcome.jobNamespace}/${outcome.jobName} failed: ${outcome.message}`,
          ),
          condition('Available', 'False', 'SecretNotReady', 'The pull secret is not provisioned'),
          condition('Health', 'False', 'JobFailed', outcome.message),
        ],
        data: {
          ...targetData(outcome.target),
          jobName: outcome.jobName,
          // A failure after the check: what the check found, from the Job's last pod (docs/verification.md).
          ...verificationData(outcome.report?.registryVerification),
        },
      };
    case 'finalized': {
      const cloud = {
        retained: 'cloud secret retained',
        deleted: 'cloud secret deleted',
        absent: 'no cloud secret',
      }[outcome.cloud];
      const k8s = outcome.kubernetesRemoved ? 'Kubernetes Secret deleted' : 'no Kubernetes Secret';
      const jobs = outcome.jobs ? `${outcome.jobs} Job(s) deleted, ` : '';
      return {
        conditions: [
          condition('Applied', 'False', 'ClusterDeleted', `Cleanup done: ${jobs}${k8s}, ${cloud}`),
          condition('Available', 'False', 'ClusterDeleted', 'The cluster is being deleted'),
          HEALTHY,
          condition('Finalized', 'True', 'CleanupCompleted', `${jobs}${k8s}; ${cloud}`),
        ],
        data: {
          ...targetData(outcome.target),
          cloudSecret: outcome.cloud,
          ...(outcome.jobs === undefined ? {} : { jobsDeleted: outcome.jobs }),
        },
      };
    }
    case 'finalize-failed': {
      // Finalized=False blocks the cluster's removal until cleanup is confirmed. Cleanup still in
      // progress is not the adapter's fault; anything else (unreachable, forbidden) is.
      const reason = failureReason(outcome.error.code);
      const pending = outcome.error.code === 'CLEANUP_PENDING';
      return {
        conditions: [
          condition('Applied', 'Unknown', pending ? reason : 'CleanupFailed', outcome.error.message),
          condition(
            'Available',
            'False',
            'ClusterDeleted',
            'The cluster is being deleted; cleanup is not confirmed yet',
          ),
          pending ? HEALTHY : condition('Health', 'False', reason, outcome.error.message),
          condition('Finalized', 'False', reason, outcome.error.message),
        ],
        data: { ...targetData(outcome.target), errorCode: outcome.error.code },
      };
    }
  }
}

/**
 * The status report for one outcome: `Applied`, `Available`, `Health` always, `Finalized` on
 * deletion; `observed_generation` is the cluster generation that was worked on. The plug-ins'
 * `addition`: a `healthProblem` (transfer checks failing past their backoff) turns a `Health=True`
 * into False with its reason; its `data` (the certificate expiry) goes into `data`. Messages come from
 * PullSecretError messages, which never carry credentials.
 *
 * `Available` is `Unknown` only while preconditions are not met (waiting is not failing). The API
 * stores such a report only as an adapter's first one for the cluster and discards later ones with
 * 204, keeping the last True/False: the pipeline counts that as delivered. A deletion report never
 * carries `Available=Unknown`, since a discarded report would take its `Finalized` with it.
 */
export function buildStatusReport(
  outcome: WorkOutcome,
  generation: number,
  observedTime = new Date(),
  addition: StatusAddition = {},
): AdapterStatusReport {
  const { conditions, data: described } = describe(outcome);
  const data = addition.data === undefined ? described : { ...described, ...addition.data };
  // A plug-in's problem (transfer checks failing past their backoff): Degraded, even when this reconcile went well.
  const problem = addition.healthProblem;
  const withTransfer =
    problem === undefined
      ? conditions
      : conditions.map((c) =>
          c.type === 'Health' && c.status === 'True'
            ? condition('Health', 'False', problem.reason, problem.message)
            : c,
        );
  return {
    adapter: ADAPTER_NAME,
    observed_generation: generation,
    observed_time: observedTime.toISOString(),
    conditions: withTransfer,
    data,
  };
}
