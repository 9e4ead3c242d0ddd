import { writeFileAtomic } from '../util/atomic-file.js';
import { redactor } from '../pullsecret/redact.js';

/**
 * The JSON a status-reporter sidecar reads from `RESULTS_PATH` once the job ends.
 * Never holds credential bytes.
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
  timestamp: string;
}

/** Writes the result file atomically with mode 0600 (through the redactor, as a last guard). */
export async function writeResultFile(path: string, result: JobResultFile): Promise<void> {
  await writeFileAtomic(path, redactor.redact(`${JSON.stringify(result, null, 2)}\n`));
}
