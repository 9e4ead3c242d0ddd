import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { withSignal } from './client.js';
import {
  VERIFICATION_OUTCOMES,
  type VerificationOutcome,
  type VerificationSummary,
} from '../pullsecret/verification-summary.js';
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
 * The report of the Job's most recently finished pod (pods found by `controller-uid`, the label the
 * Job controller puts on them), or undefined when there is none or it cannot be read (pods already
 * removed, no permission to list them): the caller then reports from the Job's conditions alone.
 * Never throws.
 */
export async function readJobReport(
  core: CoreV1Api,
  namespace: string,
  jobUid: string | undefined,
  signal?: AbortSignal,
): Promise<JobReport | undefined> {
  if (jobUid === undefined || jobUid === '') return undefined;
  try {
    const pods = await core.listNamespacedPod(
      { namespace, labelSelector: `controller-uid=${jobUid}` },
      withSignal(signal),
    );
    return parseJobReport(lastTerminationMessage(pods.items));
  } catch {
    return undefined;
  }
}
