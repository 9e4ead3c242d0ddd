import { homedir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { PullSecretError } from '../errors/index.js';
import { printError, printOut, reportFailure } from './output.js';

/** Google service account emails (user-managed and Google-managed). */
const SERVICE_ACCOUNT = /^[a-z0-9][a-z0-9.-]{0,99}@[a-z0-9][a-z0-9.-]{0,99}\.gserviceaccount\.com$/;
const WORKLOAD_POOL = /^[a-z][a-z0-9.:-]{4,98}\.svc\.id\.goog$/;
const KSA = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;
/** Preflight waits less than the job for an answer: an operator is watching. */
const PREFLIGHT_CALL_TIMEOUT_MS = '10000';

interface PreflightOptions {
  project: string;
  serviceAccount?: string;
  secret?: string;
  workloadPool?: string;
  kubernetesServiceAccount: string;
  json: boolean;
}

/** `preflight --project ID`: checks a customer project before its first cluster. */
export function preflightCommand(): Command {
  return new Command('preflight')
    .description('Check a customer GCP project before its first cluster: credentials, Secret Manager API, the four IAM permissions.')
    .requiredOption('--project <id>', 'customer GCP project id that will hold the pull secrets')
    .option('--service-account <email>', 'Google service account the adapter acts as, for the printed fixes (default pullsecret-manager@PROJECT.iam.gserviceaccount.com)')
    .option('--secret <id>', 'test the permissions on this existing secret instead of a probe name (an exact answer)')
    .option('--workload-pool <pool>', 'Workload Identity pool of the adapter\'s cluster, CLUSTER_PROJECT.svc.id.goog, for the printed fixes')
    .option('--kubernetes-service-account <namespace/name>', 'Kubernetes service account the adapter runs as', 'hyperfleet-system/pullsecret-adapter')
    .option('--json', 'print the report as JSON', false)
    .addHelpText(
      'after',
      [
        '',
        'Checks the permissions of whoever runs it: run it as the adapter (kubectl exec into its pod) or with',
        'Application Default Credentials impersonating the adapter\'s Google service account.',
        'SECRET_MANAGER_ENDPOINT, SECRET_MANAGER_INSECURE and GCP_CALL_TIMEOUT_MS apply as for run-job.',
        'Makes at most two read-only calls. Exit codes: 0 every check passed (warnings allowed), 1 a check failed, 2 usage error.',
      ].join('\n'),
    )
    .action(async (options: PreflightOptions) => {
      process.exitCode = await preflight(options);
    });
}

function usage(message: string): PullSecretError {
  return new PullSecretError('CONFIG_INVALID', message);
}

async function preflight(options: PreflightOptions): Promise<number> {
  // Loaded here: the GCP store pulls in the Secret Manager SDK, which other commands must not pay for.
  const { parseEnv, throwEnvProblems } = await import('../config/env.js');
  const { gcpStoreConfigSchema, gcpStoreEnv } = await import('../stores/gcp-secret-manager/config.js');
  const { runPreflight, formatReport, reportJson, PROBE_SECRET_ID } = await import('../preflight/index.js');
  const { assertSecretId } = await import('../pullsecret/identifiers.js');
  const opened: { store?: { close(): Promise<void> } } = {};
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.on('SIGINT', abort).on('SIGTERM', abort);
  try {
    const project = gcpStoreConfigSchema.safeParse({ projectId: options.project });
    if (!project.success) throw usage(`invalid --project: ${project.error.issues[0]?.message ?? 'not a GCP project id'}`);
    const serviceAccount = options.serviceAccount ?? `pullsecret-manager@${options.project}.iam.gserviceaccount.com`;
    if (!SERVICE_ACCOUNT.test(serviceAccount)) throw usage('invalid --service-account: must be a Google service account email (NAME@PROJECT.iam.gserviceaccount.com)');
    if (options.workloadPool !== undefined && !WORKLOAD_POOL.test(options.workloadPool)) throw usage('invalid --workload-pool: must be CLUSTER_PROJECT.svc.id.goog');
    const ksa = KSA.exec(options.kubernetesServiceAccount);
    if (ksa === null) throw usage('invalid --kubernetes-service-account: must be namespace/name');
    const secretId = options.secret ?? PROBE_SECRET_ID;
    assertSecretId(secretId);
    const parsed = parseEnv(gcpStoreConfigSchema, gcpStoreEnv, {
      ...process.env,
      GCP_PROJECT_ID: options.project,
      GCP_CALL_TIMEOUT_MS: process.env.GCP_CALL_TIMEOUT_MS || PREFLIGHT_CALL_TIMEOUT_MS,
    });
    throwEnvProblems([parsed]);
    if (!parsed.ok) return 2;
    const config = parsed.value;
    const report = await runPreflight(
      {
        project: options.project,
        serviceAccount,
        workloadPool: options.workloadPool ?? 'CLUSTER_PROJECT.svc.id.goog',
        kubernetesServiceAccount: { namespace: ksa[1] as string, name: ksa[3] as string },
        endpoint: config.endpoint ?? 'secretmanager.googleapis.com:443',
        insecure: config.insecure,
        secretId,
        env: process.env,
        homeDir: homedir(),
        readFile: (path) => readFile(path, 'utf8'),
        signal: controller.signal,
      },
      async () => {
        const { gcpStoreFactory, GcpSecretStore } = await import('../stores/gcp-secret-manager/index.js');
        const created = await gcpStoreFactory.create(config);
        opened.store = created;
        if (!(created instanceof GcpSecretStore)) throw new PullSecretError('INTERNAL', 'the gcp store factory did not return a GCP Secret Manager store');
        return created;
      },
    );
    printOut(options.json ? reportJson(report) : formatReport(report));
    if (report.ok) return 0;
    const failed = report.checks.filter((c) => c.status === 'fail').length;
    printError(`preflight failed: ${failed} check${failed === 1 ? '' : 's'} failed; run the fix commands above, then preflight again`);
    return 1;
  } catch (err) {
    return reportFailure(err);
  } finally {
    process.off('SIGINT', abort).off('SIGTERM', abort);
    await opened.store?.close();
  }
}
