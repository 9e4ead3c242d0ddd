import type { JobSummary } from '../kube/job-informer.js';
import type { Logger } from '../observability/logger.js';
import type { Executor } from './executor.js';

/**
 * Job mode reports on completion. When the Job informer (`src/kube/job-informer.ts`) sees a Job
 * finish that no event has reported finished (its event's wait ended first and reported
 * `JobInProgress`), the cluster is reconciled at once through the pipeline
 * (`EventPipeline.reconcile`): the same per-cluster scheduler, the same executor (which finds the
 * finished Job of that generation and writes nothing), the same report builder and
 * `pullsecret_job_total`. The scheduler drops a reconcile of an older generation when a newer one is
 * waiting, and the pipeline reports the generation it reads from the API, so an old Job's outcome
 * never overwrites a newer report. A Job whose outcome an event reported meanwhile (the informer and
 * the event's own wait race) is skipped when its turn comes.
 */
export class JobReports {
  /** Jobs whose finished outcome an event (or an earlier report) produced; forgotten when the Job goes. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly options: {
      /** Reconciles the cluster; `still` false when it starts means an event reported the Job meanwhile. */
      reconcile: (clusterId: string, generation: number, still: () => boolean) => Promise<unknown>;
      logger: Logger;
    },
  ) {}

  /** The executor, noting every finished Job outcome it returns. */
  track(executor: Executor): Executor {
    return {
      execute: async (work, signal) => {
        const outcome = await executor.execute(work, signal);
        if (outcome.kind === 'job-succeeded' || outcome.kind === 'job-failed') this.reported.add(outcome.jobName);
        return outcome;
      },
      finalize: (cleanup, signal) => executor.finalize(cleanup, signal),
      close: () => executor.close(),
    };
  }

  /** For `JobInformer`'s `onFinished`. */
  readonly finished = (job: JobSummary): void => {
    if (this.reported.has(job.name) || job.clusterId === '') return;
    this.options.logger.info({ operation: 'job-finished', cluster_id: job.clusterId, job: job.name, generation: job.generation }, 'Job finished; reporting its outcome');
    void this.options.reconcile(job.clusterId, job.generation, () => !this.reported.has(job.name));
  };

  /** For `JobInformer`'s `onRemoved`. */
  readonly removed = (name: string): void => {
    this.reported.delete(name);
  };
}
