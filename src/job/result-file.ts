import { chmod } from 'node:fs/promises';
import { writeFileAtomic } from '../util/atomic-file.js';
import { redactor } from '../pullsecret/redact.js';
import type { VerificationFacts } from '../reconcile/steps.js';
import { PullSecretError } from '../errors/index.js';
import { resultPathProblem } from './path-checks.js';

/** The status-reporter sidecar's limits on the two text fields it copies into the Job's condition. */
export const RESULT_REASON_MAX = 128;
export const RESULT_MESSAGE_MAX = 1024;

/**
 * The JSON a status-reporter sidecar reads from `RESULTS_PATH` once the job ends: `status` exactly
 * `success` or `failure`, `reason` at most 128 characters, `message` at most 1024, extra data
 * allowed. Never holds credential bytes.
 */
export interface JobResultFile {
  status: 'success' | 'failure';
  /** PascalCase: SecretCreated, SecretUpdated, SecretUnchanged, DryRunSucceeded, or a failure reason. */
  reason: string;
  message: string;
  cluster_id?: string;
  secret_name?: string;
  secret_path?: string;
  version?: string;
  version_path?: string;
  outcome?: 'created' | 'updated' | 'unchanged';
  dry_run?: boolean;
  /** The Kubernetes Secret written after the store step, when a target is configured. */
  kubernetes_secret?: { namespace: string; name: string; outcome: 'created' | 'updated' | 'unchanged' };
  error_code?: string;
  /** The version the run left current (status `data.currentVersion`). */
  current_version?: string;
  /** With retention on: the version it superseded, its state and the end of its grace (status `previousVersion*`). */
  previous_version?: string;
  previous_version_state?: string;
  previous_grace_ends_at?: string;
  /**
   * With registry verification on and a new pull secret: the mode and each registry's outcome (status
   * `registryVerification`).
   */
  registry_verification?: VerificationFacts;
  /** The rollback pin the run served (status `pin`, docs/retention.md); names and times only. */
  pin?: ResultPin;
  timestamp: string;
}

/** A rollback pin as the result file carries it (status `pin`, in snake_case). */
export interface ResultPin {
  source_version: string;
  version?: string;
  by: string;
  at: string;
  reason?: string;
  expires_at?: string;
}

/** `text` cut to `max` characters, the cut marked with `...`. */
function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/**
 * The result as the sidecar's contract wants it: text fields redacted first (so no cut can leave
 * half a credential behind), then bounded.
 */
function sidecarResult(result: JobResultFile): JobResultFile {
  return {
    ...result,
    reason: bounded(redactor.redact(result.reason), RESULT_REASON_MAX),
    message: bounded(redactor.redact(result.message), RESULT_MESSAGE_MAX),
  };
}

/** The kubelet keeps at most this many bytes of a termination message. */
export const TERMINATION_MESSAGE_MAX = 4096;

/**
 * The report the adapter reads from the pod's status (Job mode): the result's status, reason,
 * message, error code, versions, registry verification and rollback pin as compact JSON, at most 4096
 * bytes (the message is cut, then the verification and then the pin dropped, when it would not fit). Redacted like the
 * file.
 */
export function terminationMessage(result: JobResultFile): string {
  const {
    status,
    reason,
    message,
    error_code,
    current_version,
    previous_version,
    previous_version_state,
    previous_grace_ends_at,
    registry_verification,
    pin,
  } = sidecarResult(result);
  const report = {
    status,
    reason,
    message: bounded(message, 512),
    error_code,
    current_version,
    previous_version,
    previous_version_state,
    previous_grace_ends_at,
    registry_verification,
    pin,
  };
  let text = redactor.redact(JSON.stringify(report));
  if (Buffer.byteLength(text) > TERMINATION_MESSAGE_MAX)
    text = redactor.redact(JSON.stringify({ ...report, registry_verification: undefined }));
  // A pin's reason is an operator's free text: the pin goes too rather than the report.
  if (Buffer.byteLength(text) > TERMINATION_MESSAGE_MAX)
    text = redactor.redact(JSON.stringify({ ...report, registry_verification: undefined, pin: undefined }));
  return text;
}

/**
 * Mode of the result file: readable by every UID. The status-reporter sidecar runs as its image's
 * own non-root user (65532, distroless `nonroot`) unless the pod forces one UID on every container,
 * and the file holds no credential (openshift-hyperfleet/status-reporter README).
 */
const RESULT_FILE_MODE = 0o644;

/**
 * Writes the result file atomically with mode 0644 (set explicitly, so a restrictive umask cannot
 * hide it from the sidecar), through the redactor as a last guard. Replaces only a regular file:
 * a symlink, FIFO, device or directory at `path` is left as it is (checked with lstat right before
 * the rename, which itself never follows a symlink).
 * @throws PullSecretError CONFIG_INVALID when `path` holds anything but a regular file.
 */
export async function writeResultFile(path: string, result: JobResultFile): Promise<void> {
  const beforeCommit = () => {
    const problem = resultPathProblem(path);
    if (problem !== undefined)
      throw new PullSecretError('CONFIG_INVALID', `RESULTS_PATH ${problem}: the result file was not written`);
  };
  await writeFileAtomic(path, redactor.redact(`${JSON.stringify(sidecarResult(result), null, 2)}\n`), {
    mode: RESULT_FILE_MODE,
    beforeCommit,
  });
  await chmod(path, RESULT_FILE_MODE);
}
