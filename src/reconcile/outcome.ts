import type { PullSecretError } from '../errors/index.js';
import type { ApplyResult } from '../kube/target.js';
import type { JobReport } from '../kube/job-report.js';
import type { ReconcileResult } from './reconcile-pull-secret.js';
import type { ScopeValues as StoreSettingValues } from '../stores/factory.js';

/** Where the work was done, for the status `data`. */
export interface WorkTarget {
  /** The store kind (`gcp`, `aws`, `azure`, `local`). */
  store: string;
  /** The `providers` key whose store serves the cluster (`*`: the one store of every cluster). */
  provider: string;
  /** The store settings read from the cluster (GCP: `projectId`, `kmsKeyName`); never a credential. */
  settings: StoreSettingValues;
  secretName: string;
  namespace: string;
  kubernetesSecretName: string;
}

/** What happened to one cluster event; the status report is derived from it alone. */
export type WorkOutcome =
  | { kind: 'applied'; target: WorkTarget; result: ReconcileResult }
  | { kind: 'skipped'; precondition: string; message: string }
  | { kind: 'failed'; error: PullSecretError; target?: WorkTarget }
  | { kind: 'job-running'; target: WorkTarget; jobName: string; jobNamespace: string }
  /** `report`: what the Job's pod reported (versions, registry verification), when it could be read. */
  | { kind: 'job-succeeded'; target: WorkTarget; jobName: string; jobNamespace: string; report?: JobReport }
  /** `report`: what the Job's last pod reported (the registry verification of a failure after it), when read. */
  | {
      kind: 'job-failed';
      target: WorkTarget;
      jobName: string;
      jobNamespace: string;
      message: string;
      report?: JobReport;
    }
  | {
      kind: 'finalized';
      target?: WorkTarget;
      kubernetesRemoved: boolean;
      cloud: 'retained' | 'deleted' | 'absent';
      jobs?: number;
    }
  | { kind: 'finalize-failed'; target: WorkTarget; error: PullSecretError };

export type { ApplyResult };
