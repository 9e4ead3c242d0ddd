import { BatchV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { MANAGED_BY } from '../pullsecret/identifiers.js';
import type { RetryPolicy } from '../util/retry.js';
import { makeApiClient, withSignal } from './client.js';
import { classifyKubeError } from './errors.js';
import { JOB_APP_LABEL } from './job-manifest.js';
import { terminalCondition } from './job-watch.js';
import { listPages, runListWatch, type Listed, type RelistReason } from './list-watch.js';

/**
 * One list+watch (`list-watch.ts`) of the Jobs we create (`managed-by=hyperfleet,app=pullsecret-job`
 * in the Jobs' namespace), telling when one finishes. Memory: per Job its name, cluster id,
 * generation and whether it finished.
 */

const JOB_SELECTOR = `${MANAGED_BY.key}=${MANAGED_BY.value},app=${JOB_APP_LABEL}`;
const PAGE = 500;
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 250, maxDelayMs: 10_000 };

/** What is kept of one Job. */
export interface JobSummary {
  readonly name: string;
  /** From the `cluster-id` label; empty when missing. */
  readonly clusterId: string;
  /** From the `generation` label; 0 when missing. */
  readonly generation: number;
  readonly finished: boolean;
}

function summarize(job: V1Job): JobSummary {
  const labels = job.metadata?.labels ?? {};
  return {
    name: job.metadata?.name ?? '',
    clusterId: labels['cluster-id'] ?? '',
    generation: Number(labels.generation ?? '0') || 0,
    finished: terminalCondition(job) !== undefined,
  };
}

interface JobInformerOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /**
   * A Job seen unfinished (or new) and now finished. Jobs already finished at the first list are
   * not reported: their events, or the next ones, report them.
   */
  onFinished: (job: JobSummary) => void;
  /** A Job deleted (or gone at a new list). */
  onRemoved?: (name: string) => void;
  retry?: RetryPolicy;
  onSize?: (size: number) => void;
  onRelist?: (reason: RelistReason) => void;
  onError?: (fields: Record<string, unknown>) => void;
}

/** See the module comment. Start it once, stop it once. */
export class JobInformer {
  private readonly jobs = new Map<string, JobSummary>();
  private readonly controller = new AbortController();
  private readonly batch: BatchV1Api;
  private running: Promise<void> | undefined;

  constructor(private readonly options: JobInformerOptions) {
    this.batch = makeApiClient(options.kubeConfig, BatchV1Api);
  }

  /** Starts listing and watching in the background; failures are retried for ever (`onError`). */
  start(): void {
    this.running ??= runListWatch<JobSummary>({
      kubeConfig: this.options.kubeConfig,
      path: `/apis/batch/v1/namespaces/${encodeURIComponent(this.options.namespace)}/jobs`,
      labelSelector: JOB_SELECTOR,
      signal: this.controller.signal,
      retry: this.options.retry ?? DEFAULT_RETRY,
      list: (signal) => this.list(signal),
      onList: (items, reason) => this.replace(items, reason),
      onEvent: (type, job) =>
        this.seen(
          type === 'DELETED' ? undefined : summarize(job as V1Job),
          (job as V1Job).metadata?.name ?? '',
        ),
      onError: this.options.onError,
    });
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  private async list(signal: AbortSignal): Promise<Listed<JobSummary>> {
    const { namespace } = this.options;
    try {
      return await listPages(
        (cont) =>
          this.batch.listNamespacedJob(
            { namespace, labelSelector: JOB_SELECTOR, limit: PAGE, _continue: cont },
            withSignal(signal),
          ),
        summarize,
      );
    } catch (err) {
      throw classifyKubeError(err, { verb: 'list', kind: 'Job', namespace, name: JOB_SELECTOR });
    }
  }

  private replace(items: JobSummary[], reason: RelistReason): void {
    if (reason !== 'initial') this.options.onRelist?.(reason);
    const listed = new Set(items.map((j) => j.name));
    for (const name of [...this.jobs.keys()]) if (!listed.has(name)) this.seen(undefined, name);
    for (const job of items) {
      if (reason === 'initial') this.jobs.set(job.name, job);
      else this.seen(job, job.name);
    }
    this.options.onSize?.(this.jobs.size);
  }

  private seen(job: JobSummary | undefined, name: string): void {
    const before = this.jobs.get(name);
    if (job === undefined) {
      this.jobs.delete(name);
      this.options.onRemoved?.(name);
    } else {
      this.jobs.set(name, job);
      if (job.finished && before?.finished !== true) this.options.onFinished(job);
    }
    this.options.onSize?.(this.jobs.size);
  }
}
