import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchV1Api, CoreV1Api, V1Job, V1ObjectMeta } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { withSignal } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';
import {
  clusterJobSelector,
  jobDataSecretName,
  JOB_DEFAULTS,
  JOB_PIN_LABEL,
  PIN_TOKEN_NONE,
} from './job-manifest.js';
import { terminalCondition } from './job-watch.js';

/** What a cluster's Job cleanup removed. */
export interface JobCleanupResult {
  /** Jobs deleted now (any generation); 0 when none was left. */
  jobs: number;
  /** Data Secrets deleted now. */
  dataSecrets: number;
}

export interface JobCleanupOptions {
  /** Namespace of the Jobs; default `hyperfleet-system`. */
  namespace?: string;
  signal?: AbortSignal;
  /** How long to wait for deleted Jobs to be gone (their pods stopped); default 10 s. */
  waitMs?: number;
  /** Pause between two checks while waiting; default 100 ms. */
  pollMs?: number;
}

interface Listed {
  name: string;
  uid?: string;
}

function listed(items: Array<{ metadata?: V1ObjectMeta }>): Listed[] {
  return items
    .filter((i) => isManaged(i.metadata?.labels))
    .map((i) => ({ name: i.metadata?.name ?? '', uid: i.metadata?.uid }));
}

/**
 * Removes every Job-mode object of one cluster, whatever generation made it: its Jobs, found by
 * label (`clusterJobSelector`), not by the latest name (see `deleteJobs`: a Job still running is
 * stopped, and they are confirmed gone), then its data Secret (one per cluster, by its fixed name:
 * Secrets are never listed, the adapter's RBAC does not allow it). Only after this may the
 * cluster's Kubernetes Secret be deleted: no pod is left to write it again. Objects already gone
 * count as deleted; objects without `managed-by=hyperfleet` are never touched.
 *
 * @throws PullSecretError CLEANUP_PENDING (retryable) when Jobs are still terminating after `waitMs`;
 *   classified Kubernetes API errors (list, read, delete); ABORTED.
 */
export async function removeClusterJobs(
  apis: { batch: BatchV1Api; core: CoreV1Api },
  clusterId: string,
  options: JobCleanupOptions = {},
): Promise<JobCleanupResult> {
  const namespace = options.namespace ?? JOB_DEFAULTS.namespace;
  const jobs = await deleteJobs(apis.batch, clusterId, () => true, options);
  const dataSecrets = (await deleteDataSecret(
    apis.core,
    namespace,
    jobDataSecretName(clusterId),
    options.signal,
  ))
    ? 1
    : 0;
  return { jobs, dataSecrets };
}

/**
 * Stops the cluster's Jobs of generations older than `generation` that have not finished, so that
 * a superseded generation's pod can never write after a newer one; finished Jobs are left to their
 * TTL. Same waiting and errors as `removeClusterJobs`. @returns how many Jobs were deleted.
 */
export function stopOlderJobs(
  batch: BatchV1Api,
  clusterId: string,
  generation: number,
  options: JobCleanupOptions = {},
): Promise<number> {
  return deleteJobs(
    batch,
    clusterId,
    (job) => Number(job.metadata?.labels?.generation) < generation && terminalCondition(job) === undefined,
    options,
  );
}

/**
 * Deletes the cluster's finished Job of `generation` when its pin label differs from `pinToken` (the
 * rollback pin changed since it ran), and waits until it is gone, so that the launcher can run the
 * generation again. A running Job is left alone. Resolves to the number of Jobs deleted (0 or 1).
 */
export function removeFinishedJobOfOtherPin(
  batch: BatchV1Api,
  clusterId: string,
  generation: number,
  pinToken: string,
  options: JobCleanupOptions = {},
): Promise<number> {
  return deleteJobs(
    batch,
    clusterId,
    (job) =>
      Number(job.metadata?.labels?.generation) === generation &&
      terminalCondition(job) !== undefined &&
      (job.metadata?.labels?.[JOB_PIN_LABEL] ?? PIN_TOKEN_NONE) !== pinToken,
    options,
  );
}

/**
 * Deletes the cluster's Jobs that `which` selects with `propagationPolicy: Foreground` (the API
 * server keeps each one, with a deletionTimestamp, until its pods are gone), then lists them again
 * until none is left or `waitMs` passes.
 */
async function deleteJobs(
  batch: BatchV1Api,
  clusterId: string,
  which: (job: V1Job) => boolean,
  options: JobCleanupOptions,
): Promise<number> {
  const namespace = options.namespace ?? JOB_DEFAULTS.namespace;
  const labelSelector = clusterJobSelector(clusterId);
  const signal = options.signal;
  const listJobs = async (): Promise<Listed[]> => {
    try {
      return listed(
        (await batch.listNamespacedJob({ namespace, labelSelector }, withSignal(signal))).items.filter(which),
      );
    } catch (err) {
      throw classifyKubeError(err, { verb: 'list', kind: 'Job', namespace, name: labelSelector });
    }
  };
  const jobs = await listJobs();
  let deleted = 0;
  for (const job of jobs) {
    if (
      await deleteOne(
        () =>
          batch.deleteNamespacedJob(
            {
              namespace,
              name: job.name,
              propagationPolicy: 'Foreground',
              body: { preconditions: { uid: job.uid } },
            },
            withSignal(signal),
          ),
        'Job',
        namespace,
        job.name,
      )
    )
      deleted++;
  }
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (let left = jobs.length > 0 ? await listJobs() : []; left.length > 0; left = await listJobs()) {
    if (Date.now() >= deadline) {
      throw new PullSecretError(
        'CLEANUP_PENDING',
        `${left.length} Job(s) of cluster ${quoteIdentifier(clusterId)} in namespace ` +
          `${quoteIdentifier(namespace)} are still terminating (${left.map((j) => j.name).join(', ')}); ` +
          `cleanup continues on the next event`,
      );
    }
    await pause(options.pollMs ?? 100, signal);
  }
  return deleted;
}

/** Deletes one object; false when it was gone already. A 409 (replaced since the list) is a retryable conflict. */
async function deleteOne(
  call: () => Promise<unknown>,
  kind: string,
  namespace: string,
  name: string,
): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (err) {
    const code = apiFailure(err)?.code;
    if (code === 404) return false;
    throw classifyKubeError(err, { verb: 'delete', kind, namespace, name });
  }
}

/** The data Secret is read first: one without `managed-by=hyperfleet` is left alone. */
async function deleteDataSecret(
  core: CoreV1Api,
  namespace: string,
  name: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let uid: string | undefined;
  try {
    const current = await core.readNamespacedSecret({ namespace, name }, withSignal(signal));
    if (!isManaged(current.metadata?.labels)) return false;
    uid = current.metadata?.uid;
  } catch (err) {
    if (apiFailure(err)?.code === 404) return false;
    throw classifyKubeError(err, { verb: 'read', kind: 'Secret', namespace, name });
  }
  return deleteOne(
    () =>
      core.deleteNamespacedSecret({ namespace, name, body: { preconditions: { uid } } }, withSignal(signal)),
    'Secret',
    namespace,
    name,
  );
}

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new PullSecretError('ABORTED', 'Job cleanup aborted');
  }
}
