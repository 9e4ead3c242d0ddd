import { parseEnv, throwEnvProblems } from '../../../config/env.js';
import { PullSecretError } from '../../../errors/index.js';
import type { PreflightOutcome, PreflightRunner } from '../../factory.js';
import { formatChecks, type CheckResult } from '../../preflight-report.js';
import { AwsSecretStore } from '../aws-secret-store.js';
import { awsStoreConfigSchema, awsStoreEnv } from '../config.js';
import { createAwsStore } from '../create-store.js';
import { putRolePolicyCommand, REQUIRED_ACTIONS, type PolicyTarget } from './policy.js';

/** The secret the read-only probe asks about; it need not exist. */
const AWS_PROBE_SECRET = 'hyperfleet-preflight-probe';
/** IAM role names: 1-64 of letters, digits and `+=,.@_-`. */
const ROLE_NAME = /^[A-Za-z0-9+=,.@_-]{1,64}$/;
/** Preflight waits less than the job for an answer: an operator is watching. */
const PREFLIGHT_CALL_TIMEOUT_MS = '10000';

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const usage = (message: string) => new PullSecretError('CONFIG_INVALID', message);

/** What a probe call told: allowed (answered, found or not), refused, or the credentials or endpoint failed. */
type Verdict = { allowed: true } | { allowed: false; error: PullSecretError };

async function probe(call: () => Promise<unknown>, signal: AbortSignal): Promise<Verdict> {
  try {
    await call();
    return { allowed: true };
  } catch (err) {
    if (signal.aborted) throw err;
    if (err instanceof PullSecretError && err.code === 'SECRET_NOT_FOUND') return { allowed: true };
    return {
      allowed: false,
      error:
        err instanceof PullSecretError
          ? err
          : new PullSecretError('STORE_FAILED', 'unexpected preflight failure', { cause: err }),
    };
  }
}

/**
 * The checks, from what two read-only calls on a probe secret answered (DescribeSecret, then
 * GetSecretValue). The write actions cannot be proven without writing: they are a warning that
 * carries the policy to attach, the same command a refused read gets.
 */
function awsChecks(
  describe: Verdict,
  read: Verdict | undefined,
  target: PolicyTarget & { roleName: string; resource: string },
): CheckResult[] {
  const fix = [putRolePolicyCommand(target.roleName, target)];
  const skipped = (id: string, title: string): CheckResult => ({
    id,
    title,
    status: 'skip',
    detail: 'needs credentials and a reachable endpoint',
    fix: [],
  });
  const writes = REQUIRED_ACTIONS.filter(
    (a) => a !== 'secretsmanager:DescribeSecret' && a !== 'secretsmanager:GetSecretValue',
  );
  const writeCheck: CheckResult = {
    id: 'actions:write',
    title: 'write actions',
    status: 'warn',
    detail:
      `not verified (preflight writes nothing): ${writes.join(', ')} on ` +
      target.resource.replace(/[^:]*$/, 'hyperfleet-*') +
      (target.kmsKeyId === undefined ? '' : ', kms:GenerateDataKey and kms:Decrypt on the key'),
    fix,
  };
  if (!describe.allowed && describe.error.code !== 'STORE_PERMISSION_DENIED') {
    const credentials = describe.error.code === 'STORE_UNAUTHENTICATED';
    return [
      {
        id: credentials ? 'credentials' : 'endpoint',
        title: credentials ? 'credentials' : 'Secrets Manager endpoint',
        status: 'fail',
        detail: describe.error.message,
        fix: [],
      },
      skipped('action:secretsmanager:DescribeSecret', 'secretsmanager:DescribeSecret'),
      skipped('action:secretsmanager:GetSecretValue', 'secretsmanager:GetSecretValue'),
      writeCheck,
    ];
  }
  const action = (name: string, verdict: Verdict | undefined): CheckResult =>
    verdict === undefined || verdict.allowed
      ? {
          id: `action:${name}`,
          title: name,
          status: 'pass',
          detail: `allowed on ${target.resource}`,
          fix: [],
        }
      : { id: `action:${name}`, title: name, status: 'fail', detail: verdict.error.message, fix };
  return [
    {
      id: 'credentials',
      title: 'credentials',
      status: 'pass',
      detail: 'accepted by Secrets Manager',
      fix: [],
    },
    action('secretsmanager:DescribeSecret', describe),
    action('secretsmanager:GetSecretValue', read),
    writeCheck,
  ];
}

/**
 * `pull-secret preflight --store aws`: what the caller's AWS identity may do in a customer account
 * and region, with only read-only Secrets Manager calls (DescribeSecret and GetSecretValue of a probe
 * secret) and the exact `aws iam put-role-policy` fix.
 *
 * @throws PullSecretError CONFIG_INVALID for a bad option or store variable; ABORTED on abort.
 */
export const runAwsPreflight: PreflightRunner = async (
  options,
  { env, signal },
): Promise<PreflightOutcome> => {
  const accountId = text(options.account);
  const region = text(options.region);
  if (accountId === undefined)
    throw usage(
      "required option '--account <id>' not specified: the customer AWS account that will hold the pull secrets",
    );
  if (region === undefined)
    throw usage(
      "required option '--region <name>' not specified: the AWS region that will hold the pull secrets",
    );
  const roleName = text(options.roleName) ?? 'pullsecret-adapter';
  if (!ROLE_NAME.test(roleName))
    throw usage('invalid --role-name: must be an IAM role name (1-64 letters, digits or "+=,.@_-")');
  const parsed = parseEnv(awsStoreConfigSchema, awsStoreEnv, {
    ...env,
    AWS_SECRETS_ACCOUNT_ID: accountId,
    AWS_SECRETS_REGION: region,
    AWS_SECRETS_CALL_TIMEOUT_MS: env.AWS_SECRETS_CALL_TIMEOUT_MS || PREFLIGHT_CALL_TIMEOUT_MS,
  });
  if (!parsed.ok) {
    const renamed = {
      ...parsed,
      invalid: parsed.invalid.map((l) =>
        l
          .replace('environment variable AWS_SECRETS_ACCOUNT_ID', 'option --account')
          .replace('environment variable AWS_SECRETS_REGION', 'option --region'),
      ),
    };
    throwEnvProblems([renamed]);
  }
  if (!parsed.ok) throw usage('invalid AWS store settings');
  const config = parsed.value;
  const created = await createAwsStore(config);
  if (!(created instanceof AwsSecretStore))
    throw new PullSecretError(
      'INTERNAL',
      'the aws store factory did not return an AWS Secrets Manager store',
    );
  try {
    const resource = created.secretPath(AWS_PROBE_SECRET);
    const describe = await probe(() => created.describeRaw(AWS_PROBE_SECRET, { signal }), signal);
    const credentialsFailed = !describe.allowed && describe.error.code !== 'STORE_PERMISSION_DENIED';
    const read = credentialsFailed
      ? undefined
      : await probe(
          () => created.accessLatestEnabled(AWS_PROBE_SECRET, { signal, skipExistenceCheck: true }),
          signal,
        );
    const checks = awsChecks(describe, read, {
      accountId,
      region,
      kmsKeyId: config.kmsKeyId,
      roleName,
      resource,
    });
    const header =
      `Preflight for AWS account ${accountId} in ${region} as role ${roleName} (actions ` +
      `tested on ${resource})`;
    return {
      output:
        options.json === true
          ? JSON.stringify(
              { accountId, region, roleName, resource, checks, ok: checks.every((c) => c.status !== 'fail') },
              null,
              2,
            )
          : formatChecks(header, checks),
      ok: checks.every((c) => c.status !== 'fail'),
      failedChecks: checks.filter((c) => c.status === 'fail').length,
    };
  } finally {
    await created.close();
  }
};
