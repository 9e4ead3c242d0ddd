import { PullSecretError, toPullSecretError } from '../../../errors/index.js';
import { formatChecks, type PreflightCheck } from '../../preflight-report.js';
import {
  accessPolicyCommand,
  listAssignmentsCommand,
  loginCommand,
  roleAssignmentCommand,
} from './az-commands.js';

/** One check, with a stable id for scripts (`vault`, `right:secrets/get`). */
interface CheckResult extends PreflightCheck {
  id: string;
}

interface PreflightReport {
  vaultUrl: string;
  assignee: string;
  checks: CheckResult[];
  ok: boolean;
}

/** The Key Vault reads preflight makes; `AzureSecretStore` provides them. */
export interface PreflightProbe {
  accessLatestEnabled(secretId: string, options?: { signal?: AbortSignal }): Promise<unknown>;
  describe(secretId: string, options?: { signal?: AbortSignal }): Promise<unknown>;
}

export interface PreflightInput {
  vaultUrl: string;
  /** The vault's name (first DNS label), for the access policy command. */
  vaultName: string;
  assignee: string;
  vaultResourceId: string;
  env: NodeJS.ProcessEnv;
  /** Secret name the reads are tried on; one that does not exist is fine. */
  secretId: string;
  signal?: AbortSignal;
}

const check = (
  id: string,
  title: string,
  status: CheckResult['status'],
  detail: string,
  fix: string[] = [],
): CheckResult => ({ id, title, status, detail, fix });

/** Where `DefaultAzureCredential` will find credentials, from the environment only (no network). */
export function checkCredentials(env: NodeJS.ProcessEnv): CheckResult {
  const set = (name: string) => (env[name] ?? '') !== '';
  if (set('AZURE_FEDERATED_TOKEN_FILE') && set('AZURE_CLIENT_ID') && set('AZURE_TENANT_ID')) {
    return check(
      'credentials',
      'credentials',
      'pass',
      'workload identity (AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID); the vault check ' +
        'below proves it',
    );
  }
  if (set('AZURE_CLIENT_SECRET')) {
    return check(
      'credentials',
      'credentials',
      'warn',
      'a client secret (AZURE_CLIENT_SECRET) is a long-lived key; AKS workload identity avoids it ' +
        '(docs/azure-identity.md)',
    );
  }
  return check(
    'credentials',
    'credentials',
    'warn',
    'no workload identity variables: DefaultAzureCredential will try a managed identity, then `az login`',
    [loginCommand()],
  );
}

/** Runs one read; `granted` on the expected answer, the error otherwise. */
async function probeRight(
  read: () => Promise<unknown>,
  notFoundMeansGranted: boolean,
): Promise<PullSecretError | undefined> {
  try {
    await read();
    return undefined;
  } catch (err) {
    const e = toPullSecretError(err);
    if (notFoundMeansGranted && e.code === 'SECRET_NOT_FOUND') return undefined;
    return e;
  }
}

/**
 * Checks a vault before its first cluster: where credentials come from (no network), then two
 * read-only Key Vault calls on a probe name: GetSecret (proves the vault is reachable, the token
 * accepted and `secrets/get` granted: Key Vault authorizes before it looks the name up, so 404 means
 * allowed) and the version list (`secrets/list`). `set`, `delete` and `recover` cannot be proven
 * without writing, so they are reported as warnings with the command that lists the grants.
 *
 * @throws ABORTED when `signal` aborts; any other failure becomes a failed check.
 */
export async function runPreflight(input: PreflightInput, probe: PreflightProbe): Promise<PreflightReport> {
  const grant = [
    roleAssignmentCommand(input.assignee, input.vaultResourceId),
    `# or, on a vault with access policies: ${accessPolicyCommand(input.vaultName, input.assignee)}`,
  ];
  const checks: CheckResult[] = [checkCredentials(input.env)];
  const call = { signal: input.signal };
  const get = await probeRight(() => probe.accessLatestEnabled(input.secretId, call), true);
  if (input.signal?.aborted) throw new PullSecretError('ABORTED', 'preflight aborted');
  if (get === undefined) {
    checks.push(
      check('vault', 'vault', 'pass', `reachable at ${input.vaultUrl} with the credentials above`),
      check('right:secrets/get', 'secrets/get', 'pass', 'granted (GetSecret answered 404, not 403)'),
    );
    const list = await probeRight(() => probe.describe(input.secretId, call), false);
    checks.push(
      list === undefined
        ? check('right:secrets/list', 'secrets/list', 'pass', 'granted')
        : check('right:secrets/list', 'secrets/list', 'fail', list.message, grant),
    );
  } else if (get.code === 'STORE_PERMISSION_DENIED') {
    checks.push(
      check('vault', 'vault', 'pass', `reachable at ${input.vaultUrl}; the token was accepted`),
      check('right:secrets/get', 'secrets/get', 'fail', get.message, grant),
    );
    checks.push(check('right:secrets/list', 'secrets/list', 'skip', 'needs secrets/get'));
  } else {
    const fix =
      get.code === 'STORE_UNAUTHENTICATED'
        ? ['# see docs/azure-identity.md: federated credential of the managed identity', loginCommand()]
        : [`# check that this network can reach ${input.vaultUrl} (vault firewall, private endpoint, DNS)`];
    checks.push(
      check('vault', 'vault', 'fail', get.message, fix),
      check('right:secrets/get', 'secrets/get', 'skip', 'needs the vault'),
      check('right:secrets/list', 'secrets/list', 'skip', 'needs the vault'),
    );
  }
  const reached = checks.some((c) => c.id === 'right:secrets/get' && c.status === 'pass');
  checks.push(
    reached
      ? check(
          'right:secrets/set',
          'secrets/set, delete, recover',
          'warn',
          'cannot be verified without writing; check the grants',
          [listAssignmentsCommand(input.assignee, input.vaultResourceId), ...grant],
        )
      : check('right:secrets/set', 'secrets/set, delete, recover', 'skip', 'needs secrets/get'),
  );
  return {
    vaultUrl: input.vaultUrl,
    assignee: input.assignee,
    checks,
    ok: checks.every((c) => c.status !== 'fail'),
  };
}

/** The report as text (the layout every store's preflight shares). */
export function formatReport(report: PreflightReport): string {
  return formatChecks(
    `Preflight for Azure key vault ${report.vaultUrl} as ${report.assignee}`,
    report.checks,
  );
}
