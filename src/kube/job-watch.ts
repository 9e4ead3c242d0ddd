import { setTimeout as sleep } from 'node:timers/promises';
import { type BatchV1Api, type KubeConfig, type V1Job, type V1JobCondition } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { backoffDelay, withRetry, type RetryPolicy } from '../util/retry.js';
import { withSignal } from './client.js';
import { classifyKubeError } from './errors.js';
import { watchOnce } from './list-watch.js';

/**
 * Waiting for a Job to finish: list it (by name), then watch (`list-watch.ts`) from the list's
 * resourceVersion until a Complete or Failed condition. A dropped watch, a server-side timeout or 410 Gone (the
 * resourceVersion was compacted) leads to a fresh list and a new watch, so no transition is missed.
 */

/** Retries of the list after transient API errors, and the pace of re-watching after disconnects. */
const DEFAULT_WATCH_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5000 };

/** A terminal condition of a Job, if it has one. */
export function terminalCondition(job: V1Job): V1JobCondition | undefined {
  return job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

interface WaitForJobInput {
  kubeConfig: KubeConfig;
  batch: BatchV1Api;
  namespace: string;
  name: string;
  /** Aborts the wait; the caller decides whether that was a deadline or a cancel. */
  signal: AbortSignal;
  retry?: RetryPolicy;
  onRelist?: (fields: Record<string, unknown>) => void;
}

function aborted(): PullSecretError {
  return new PullSecretError('ABORTED', 'waiting for the Job aborted');
}

async function listJob(input: WaitForJobInput): Promise<{ job?: V1Job; resourceVersion?: string }> {
  const { batch, namespace, name, signal } = input;
  try {
    const list = await batch.listNamespacedJob(
      { namespace, fieldSelector: `metadata.name=${name}` },
      withSignal(signal),
    );
    return { job: list.items[0], resourceVersion: list.metadata?.resourceVersion };
  } catch (err) {
    throw classifyKubeError(err, { verb: 'list', kind: 'Job', namespace, name });
  }
}

type JobWatchEnd =
  | { kind: 'finished'; job: V1Job }
  | { kind: 'deleted' }
  | { kind: 'relist'; gone: boolean; progressed: boolean };

async function watchJob(input: WaitForJobInput, resourceVersion: string | undefined): Promise<JobWatchEnd> {
  let found: JobWatchEnd | undefined;
  const end = await watchOnce({
    kubeConfig: input.kubeConfig,
    path: `/apis/batch/v1/namespaces/${encodeURIComponent(input.namespace)}/jobs`,
    fieldSelector: `metadata.name=${input.name}`,
    resourceVersion,
    signal: input.signal,
    onEvent: (type, object) => {
      if (type === 'DELETED') found = { kind: 'deleted' };
      else if (type !== 'BOOKMARK' && terminalCondition(object as V1Job) !== undefined)
        found = { kind: 'finished', job: object as V1Job };
      return found !== undefined;
    },
  });
  if (end.kind === 'aborted') throw aborted();
  if (end.kind === 'stopped' && found !== undefined) return found;
  // A clean end is listed again too: the list also tells whether the Job finished meanwhile.
  return end.kind === 'relist'
    ? end
    : { kind: 'relist', gone: false, progressed: end.kind === 'ended' && end.progressed };
}

/**
 * Resolves with the Job once it has a Complete or Failed condition.
 * @throws PullSecretError JOB_FAILED (retryable) when the Job is deleted before it finishes;
 *   ABORTED when `signal` fires; the classified API error when listing keeps failing.
 */
export async function waitForJob(input: WaitForJobInput): Promise<V1Job> {
  const policy = input.retry ?? DEFAULT_WATCH_RETRY;
  let quiet = 0;
  for (;;) {
    if (input.signal.aborted) throw aborted();
    const listed = await withRetry(policy, () => listJob(input), { signal: input.signal });
    if (listed.job === undefined) throw deletedError(input);
    if (terminalCondition(listed.job) !== undefined) return listed.job;
    const end = await watchJob(input, listed.resourceVersion);
    if (end.kind === 'finished') return end.job;
    if (end.kind === 'deleted') throw deletedError(input);
    input.onRelist?.({ namespace: input.namespace, job: input.name, expired: end.gone });
    // A watch that ends without delivering anything (refused, reset) is retried at a growing pace;
    // an expired resourceVersion is normal and re-listed at once.
    quiet = end.progressed || end.gone ? 0 : quiet + 1;
    if (quiet > 0) {
      try {
        await sleep(backoffDelay(policy, quiet), undefined, { signal: input.signal });
      } catch {
        throw aborted();
      }
    }
  }
}

function deletedError(input: WaitForJobInput): PullSecretError {
  return new PullSecretError(
    'JOB_FAILED',
    `Job ${quoteIdentifier(`${input.namespace}/${input.name}`)} was deleted before it finished`,
    { retryable: true },
  );
}
