import { homedir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { parseEnv, throwEnvProblems } from '../../../config/env.js';
import { PullSecretError } from '../../../errors/index.js';
import { assertSecretId } from '../../../pullsecret/identifiers.js';
import type { PreflightOutcome, PreflightRunner } from '../../factory.js';
import { gcpStoreConfigSchema, gcpStoreEnv } from '../config.js';
import { createGcpStore } from '../create-store.js';
import { GcpSecretStore } from '../gcp-secret-store.js';
import { PROBE_SECRET_ID } from './permissions.js';
import { formatReport, reportJson } from './report.js';
import { runPreflight } from './run-preflight.js';

/** Google service account emails (user-managed and Google-managed). */
const SERVICE_ACCOUNT = /^[a-z0-9][a-z0-9.-]{0,99}@[a-z0-9][a-z0-9.-]{0,99}\.gserviceaccount\.com$/;
const WORKLOAD_POOL = /^[a-z][a-z0-9.:-]{4,98}\.svc\.id\.goog$/;
const KSA = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?)$/;
/** Preflight waits less than the job for an answer: an operator is watching. */
const PREFLIGHT_CALL_TIMEOUT_MS = '10000';

function usage(message: string): PullSecretError {
  return new PullSecretError('CONFIG_INVALID', message);
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * `pull-secret preflight` for GCP Secret Manager: checks the CLI options, then credentials, the
 * Secret Manager API and the four permissions of a customer project (`runPreflight`).
 *
 * @throws PullSecretError CONFIG_INVALID for a bad option or store variable; ABORTED on abort.
 */
export const runGcpPreflight: PreflightRunner = async (
  options,
  { env, signal },
): Promise<PreflightOutcome> => {
  const project = text(options.project);
  if (project === undefined)
    throw usage(
      "required option '--project <id>' not specified: the customer GCP project that will hold the pull secrets",
    );
  const projectOk = gcpStoreConfigSchema.safeParse({ projectId: project });
  if (!projectOk.success)
    throw usage(`invalid --project: ${projectOk.error.issues[0]?.message ?? 'not a GCP project id'}`);
  const serviceAccount =
    text(options.serviceAccount) ?? `pullsecret-manager@${project}.iam.gserviceaccount.com`;
  if (!SERVICE_ACCOUNT.test(serviceAccount))
    throw usage(
      'invalid --service-account: must be a Google service account email (NAME@PROJECT.iam.gserviceaccount.com)',
    );
  const workloadPool = text(options.workloadPool);
  if (workloadPool !== undefined && !WORKLOAD_POOL.test(workloadPool))
    throw usage('invalid --workload-pool: must be CLUSTER_PROJECT.svc.id.goog');
  const ksa = KSA.exec(text(options.kubernetesServiceAccount) ?? '');
  if (ksa === null) throw usage('invalid --kubernetes-service-account: must be namespace/name');
  const secretId = text(options.secret) ?? PROBE_SECRET_ID;
  assertSecretId(secretId);
  const parsed = parseEnv(gcpStoreConfigSchema, gcpStoreEnv, {
    ...env,
    GCP_PROJECT_ID: project,
    GCP_CALL_TIMEOUT_MS: env.GCP_CALL_TIMEOUT_MS || PREFLIGHT_CALL_TIMEOUT_MS,
  });
  throwEnvProblems([parsed]);
  if (!parsed.ok) throw usage('invalid GCP store settings');
  const config = parsed.value;
  let store: GcpSecretStore | undefined;
  try {
    const report = await runPreflight(
      {
        project,
        serviceAccount,
        workloadPool: workloadPool ?? 'CLUSTER_PROJECT.svc.id.goog',
        kubernetesServiceAccount: { namespace: ksa[1] as string, name: ksa[3] as string },
        endpoint: config.endpoint ?? 'secretmanager.googleapis.com:443',
        insecure: config.insecure,
        secretId,
        env,
        homeDir: homedir(),
        readFile: (path) => readFile(path, 'utf8'),
        signal,
      },
      async () => {
        const created = await createGcpStore(config);
        if (!(created instanceof GcpSecretStore))
          throw new PullSecretError(
            'INTERNAL',
            'the gcp store factory did not return a GCP Secret Manager store',
          );
        store = created;
        return created;
      },
    );
    return {
      output: options.json === true ? reportJson(report) : formatReport(report),
      ok: report.ok,
      failedChecks: report.checks.filter((c) => c.status === 'fail').length,
    };
  } finally {
    await store?.close();
  }
};
