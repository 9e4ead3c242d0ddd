import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { withRetry, type RetryPolicy } from '../util/retry.js';
import { withSignal } from './client.js';
import { classifyKubeError } from './errors.js';
import {
  VERIFICATION_OUTCOMES,
  type VerificationOutcome,
  type VerificationSummary,
} from '../pullsecret/verification-summary.js';
import type { PinFacts } from '../pullsecret/pin-facts.js';
import { JOB_CONTAINER_NAME } from './job-manifest.js';

/**
 * What a finished Job's last pod reported in its termination message (`terminationMessage` in
 * src/job/result-file.ts): the fields the adapter's status needs beyond the Job's conditions.
 * Every field is checked; what does not fit the shape is left out. Never holds a credential (the
 * job redacts it; the launcher masks the message again).
 */
export interface JobReport {
  status: 'success' | 'failure';
  reason: string;
  message: string;
  errorCode?: string;
  currentVersion?: string;
  previousVersion?: string;
  previousVersionState?: string;
  previousGraceEndsAt?: string;
  registryVerification?: VerificationSummary;
  /** The rollback pin the Job served (docs/retention.md): the status's `pin`. */
  pin?: PinFacts;
}

const MAX_TEXT = 1024;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TEXT ? value : undefined;
}

function verificationOf(value: unknown): JobReport['registryVerification'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const { mode, results } = value as Record<string, unknown>;
  if ((mode !== 'warn' && mode !== 'enforce') || typeof results !== 'object' || results === null)
    return undefined;
  const entries = Object.entries(results as Record<string, unknown>).filter(
    (e): e is [string, VerificationOutcome] => VERIFICATION_OUTCOMES.includes(e[1] as VerificationOutcome),
  );
  return { mode, results: Object.fromEntries(entries) };
}

function pinOf(value: unknown): PinFacts | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const p = value as Record<string, unknown>;
  const [sourceVersion, by, at] = [text(p.source_version), text(p.by), text(p.at)];
  if (sourceVersion === undefined || by === undefined || at === undefined) return undefined;
  const optional = { version: text(p.version), reason: text(p.reason), expiresAt: text(p.expires_at) };
  const pin: PinFacts = { sourceVersion, by, at };
  for (const [key, v] of Object.entries(optional)) if (v !== undefined) Object.assign(pin, { [key]: v });
  return pin;
}

/** The report in a termination message, or undefined when it is not one. */
export function parseJobReport(message: string | undefined): JobReport | undefined {
  if (message === undefined || message.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const reason = text(r.reason);
  if ((r.status !== 'success' && r.status !== 'failure') || reason === undefined) return undefined;
  const optional = {
    errorCode: text(r.error_code),
    currentVersion: text(r.current_version),
    previousVersion: text(r.previous_version),
    previousVersionState: text(r.previous_version_state),
    previousGraceEndsAt: text(r.previous_grace_ends_at),
    registryVerification: verificationOf(r.registry_verification),
    pin: pinOf(r.pin),
  };
  const report: JobReport = { status: r.status, reason, message: text(r.message) ?? '' };
  for (const [key, v] of Object.entries(optional)) if (v !== undefined) Object.assign(report, { [key]: v });
  return report;
}

/** The termination message of the pod whose Job container finished last (the first listed of a tie). */
function lastTerminationMessage(pods: readonly V1Pod[]): string | undefined {
  let last: { at: number; message: string | undefined } | undefined;
  for (const pod of pods) {
    const terminated = pod.status?.containerStatuses?.find((c) => c.name === JOB_CONTAINER_NAME)?.state
      ?.terminated;
    const at = terminated?.finishedAt === undefined ? 0 : new Date(terminated.finishedAt).getTime();
    if (at > 0 && (last === undefined || at > last.at)) last = { at, message: terminated?.message };
  }
  return last?.message;
}

/**
 * Reads of the pod list that failed for a reason that passes (429 from API Priority and Fairness, a
 * 5xx, a reset connection, a timeout): tried again, so that a Job's end is not reported without its
 * report because of one failed call.
 */
const REPORT_READ_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 2000 };

/**
 * The report of the Job's most recently finished pod (pods found by `controller-uid`, the label the
 * Job controller puts on them), or undefined when there is none or it cannot be read (pods already
 * removed, no permission to list them, the list still failing after its retries): the caller then
 * reports from the Job's conditions alone.
 * @throws PullSecretError ABORTED when `signal` aborts first: an unread report is not "no report", so
 *   the caller does not report the Job's end without it (the launcher then answers JOB_IN_PROGRESS,
 *   and the Job is read again).
 */
export async function readJobReport(
  core: CoreV1Api,
  namespace: string,
  jobUid: string | undefined,
  signal?: AbortSignal,
  retry: RetryPolicy = REPORT_READ_RETRY,
): Promise<JobReport | undefined> {
  if (jobUid === undefined || jobUid === '') return undefined;
  const list = async () => {
    try {
      return await core.listNamespacedPod(
        { namespace, labelSelector: `controller-uid=${jobUid}` },
        withSignal(signal),
      );
    } catch (err) {
      throw classifyKubeError(err, {
        verb: 'list',
        kind: 'Pod',
        namespace,
        name: `controller-uid=${jobUid}`,
      });
    }
  };
  try {
    const pods = await withRetry(retry, list, { signal });
    return parseJobReport(lastTerminationMessage(pods.items));
  } catch (err) {
    if (signal?.aborted)
      throw new PullSecretError('ABORTED', `reading the report of the Job's pods in ${namespace} aborted`, {
        cause: err,
      });
    return undefined;
  }
}
