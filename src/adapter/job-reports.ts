import type { JobSummary } from '../kube/job-informer.js';
import type { Logger } from '../observability/logger.js';
import type { Executor } from '../reconcile/executor.js';

/**
 * Job mode reports on completion. A Job this replica reported `JobInProgress` (its event's wait
 * ended first) is reported again as soon as the Job informer (`src/kube/job-informer.ts`) sees it
 * finish: its cluster is reconciled through the pipeline (`EventPipeline.reconcile`), with the same
 * per-cluster scheduler, the same executor (which finds the finished Job of that generation and
 * writes nothing), the same report builder and `pullsecret_job_total`. The scheduler drops a
 * reconcile of an older generation when a newer one is waiting, and the pipeline reports the
 * generation it reads from the API, so an old Job's outcome never overwrites a newer report.
 *
 * Only the replica that reported a Job in progress reports its end (not every replica watching),
 * and a Job whose outcome an event reported meanwhile is skipped when its turn comes. After a
 * restart, Jobs reported in progress before it are reported by their next event, as without the
 * informer.
 */
export class JobReports {
  /** Jobs this replica reported in progress and not finished since. */
  private readonly waiting = new Set<string>();
  /** Jobs the informer saw finished (for a wait that ends just after the Job). */
  private readonly done = new Set<string>();
  /** Jobs whose finished outcome was produced by an event or an earlier report. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly options: {
      /** Reconciles the cluster; `still` false when it starts means an event reported the Job meanwhile. */
      reconcile: (clusterId: string, generation: number, still: () => boolean) => Promise<unknown>;
      logger: Logger;
    },
  ) {}

  /** The executor, noting the Jobs it reports in progress and those whose outcome it returns. */
  track(executor: Executor): Executor {
    return {
      execute: async (work, signal) => {
        const outcome = await executor.execute(work, signal);
        if (outcome.kind === 'job-succeeded' || outcome.kind === 'job-failed') {
          this.reported.add(outcome.jobName);
          this.waiting.delete(outcome.jobName);
        } else if (outcome.kind === 'job-running') {
          this.reported.delete(outcome.jobName);
          // Finished between the end of the wait and now: report it right after this event.
          if (this.done.has(outcome.jobName))
            this.report({ name: outcome.jobName, clusterId: work.clusterId, generation: work.generation });
          else this.waiting.add(outcome.jobName);
        }
        return outcome;
      },
      finalize: (cleanup, signal) => executor.finalize(cleanup, signal),
      close: () => executor.close(),
    };
  }

  /** For `JobInformer`'s `onFinished`. */
  readonly finished = (job: JobSummary): void => {
    this.done.add(job.name);
    if (!this.waiting.delete(job.name) || job.clusterId === '') return;
    this.report(job);
  };

  /** For `JobInformer`'s `onRemoved`. */
  readonly removed = (name: string): void => {
    this.waiting.delete(name);
    this.done.delete(name);
    this.reported.delete(name);
  };

  private report(job: Pick<JobSummary, 'name' | 'clusterId' | 'generation'>): void {
    this.options.logger.info(
      { operation: 'job-finished', cluster_id: job.clusterId, job: job.name, generation: job.generation },
      'Job finished; reporting its outcome',
    );
    void this.options.reconcile(job.clusterId, job.generation, () => !this.reported.has(job.name));
  }
}
