import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError, toPullSecretError } from '../errors/index.js';
import { withFacts } from './failure-facts.js';
import { buildStatusReport } from './status-report.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';

const target: WorkTarget = {
  store: 'gcp',
  provider: '*',
  settings: { projectId: 'customer-prod-12345' },
  secretName: 'hyperfleet-c1-pull-secret',
  namespace: 'clusters-c1',
  kubernetesSecretName: 'c1-pull-secret',
};
const conditions = (o: WorkOutcome) =>
  Object.fromEntries(
    buildStatusReport(o, 3).conditions.map((c) => [c.type, `${c.status}/${c.reason ?? ''}`]),
  );

test('applied: Applied/Available/Health True with seed reasons and the secret in data', () => {
  const report = buildStatusReport(
    {
      kind: 'applied',
      target,
      result: {
        outcome: 'created',
        secretName: target.secretName,
        secretPath: 'projects/p/secrets/s',
        version: '1',
        versionPath: 'projects/p/secrets/s/versions/1',
        dryRun: false,
      },
    },
    7,
    new Date('2026-01-01T00:00:00Z'),
  );
  assert.equal(report.adapter, 'pullsecret');
  assert.equal(report.observed_generation, 7);
  assert.equal(report.observed_time, '2026-01-01T00:00:00.000Z');
  assert.deepEqual(
    Object.fromEntries(report.conditions.map((c) => [c.type, `${c.status}/${c.reason ?? ''}`])),
    {
      Applied: 'True/SecretCreated',
      Available: 'True/SecretAvailable',
      Health: 'True/Healthy',
    },
  );
  assert.equal(report.data?.secretPath, 'projects/p/secrets/s');
  assert.equal(report.data?.secretVersion, '1');
  assert.equal(report.data?.gcpProject, 'customer-prod-12345');
  assert.equal(report.data?.location, 'projects/customer-prod-12345');
  assert.deepEqual(report.data?.kubernetesSecret, { namespace: 'clusters-c1', name: 'c1-pull-secret' });
});

test("an invalid pull secret is the cluster's problem (Health stays True); a store outage is not", () => {
  assert.deepEqual(
    conditions({
      kind: 'failed',
      target,
      error: new PullSecretError('PULL_SECRET_INVALID', 'invalid pull secret format: "auths" is empty'),
    }),
    {
      Applied: 'False/InvalidPullSecret',
      Available: 'False/SecretNotReady',
      Health: 'True/Healthy',
    },
  );
  assert.deepEqual(
    conditions({ kind: 'failed', target, error: new PullSecretError('STORE_PERMISSION_DENIED', 'denied') }),
    {
      Applied: 'False/PermissionDenied',
      Available: 'False/SecretNotReady',
      Health: 'False/PermissionDenied',
    },
  );
});

test('skipped, Job states and deletion', () => {
  assert.deepEqual(conditions({ kind: 'skipped', precondition: 'dns-available', message: 'dns not done' }), {
    Applied: 'False/PreconditionNotMet',
    Available: 'Unknown/PreconditionNotMet',
    Health: 'True/Healthy',
  });
  assert.equal(
    conditions({ kind: 'job-running', target, jobName: 'j', jobNamespace: 'hyperfleet-system' }).Applied,
    'True/JobInProgress',
  );
  assert.equal(
    conditions({
      kind: 'job-failed',
      target,
      jobName: 'j',
      jobNamespace: 'hyperfleet-system',
      message: 'exit 1',
    }).Health,
    'False/JobFailed',
  );
  const finalized = conditions({ kind: 'finalized', target, kubernetesRemoved: true, cloud: 'retained' });
  assert.equal(finalized.Finalized, 'True/CleanupCompleted');
  assert.deepEqual(
    conditions({ kind: 'finalize-failed', target, error: new PullSecretError('STORE_UNAVAILABLE', 'down') }),
    {
      Applied: 'Unknown/CleanupFailed',
      Available: 'False/ClusterDeleted',
      Health: 'False/StoreUnavailable',
      Finalized: 'False/StoreUnavailable',
    },
  );
  assert.deepEqual(
    conditions({
      kind: 'finalize-failed',
      target,
      error: new PullSecretError('CLEANUP_PENDING', 'Jobs terminating'),
    }),
    {
      Applied: 'Unknown/CleanupPending',
      Available: 'False/ClusterDeleted',
      Health: 'True/Healthy',
      Finalized: 'False/CleanupPending',
    },
  );
});

test('every report carries the three mandatory conditions, each with a reason and a message', () => {
  const outcomes: WorkOutcome[] = [
    { kind: 'skipped', precondition: 'x', message: 'y' },
    { kind: 'failed', error: new PullSecretError('INTERNAL', 'x') },
    { kind: 'finalized', target, kubernetesRemoved: false, cloud: 'absent' },
    { kind: 'finalize-failed', target, error: new PullSecretError('STORE_PERMISSION_DENIED', 'forbidden') },
  ];
  for (const o of outcomes) {
    const report = buildStatusReport(o, 1);
    const types = report.conditions.map((c) => c.type);
    for (const required of ['Applied', 'Available', 'Health'])
      assert.ok(types.includes(required), `${o.kind} lacks ${required}`);
    for (const c of report.conditions)
      assert.ok(c.reason && c.message, `${o.kind}: ${c.type} lacks a reason or message`);
  }
});

test('Available is Unknown only while waiting, never on deletion (a discarded report would lose Finalized)', () => {
  const available = (o: WorkOutcome) =>
    buildStatusReport(o, 1).conditions.find((c) => c.type === 'Available')?.status;
  assert.equal(available({ kind: 'skipped', precondition: 'x', message: 'y' }), 'Unknown');
  assert.equal(available({ kind: 'finalized', target, kubernetesRemoved: true, cloud: 'retained' }), 'False');
  assert.equal(
    available({ kind: 'finalize-failed', target, error: new PullSecretError('CLEANUP_PENDING', 'x') }),
    'False',
  );
});

test('a store without a scope reports neither a location nor a project', () => {
  const local: WorkTarget = { ...target, store: 'local', settings: {} };
  const report = buildStatusReport(
    { kind: 'failed', target: local, error: new PullSecretError('STORE_UNAVAILABLE', 'down') },
    1,
  );
  assert.equal(report.data?.store, 'local');
  assert.equal(report.data?.location, undefined);
  assert.equal(report.data?.gcpProject, undefined);
});

test('job-succeeded with the pod report: the same version and verification data, and warn note, as in-process', () => {
  const job = {
    kind: 'job-succeeded',
    target,
    jobName: 'pullsecret-c1-gen2',
    jobNamespace: 'hyperfleet-system',
  } as const;
  const report = {
    status: 'success',
    reason: 'SecretUpdated',
    message: 'Updated',
    currentVersion: '2',
    previousVersion: '1',
    previousVersionState: 'ENABLED',
    previousGraceEndsAt: '2026-01-02T00:00:00.000Z',
    registryVerification: { mode: 'warn', results: { 'quay.io': 'rejected' } },
  } as const;
  const withReport = buildStatusReport({ ...job, report }, 2);
  const inProcess = buildStatusReport(
    {
      kind: 'applied',
      target,
      result: {
        outcome: 'updated',
        secretName: target.secretName,
        secretPath: 'p',
        version: '2',
        versionPath: 'p/versions/2',
        dryRun: false,
        retention: {
          currentVersion: '2',
          previous: { version: '1', state: 'ENABLED', graceEndsAt: '2026-01-02T00:00:00.000Z' },
        },
        verification: report.registryVerification,
      },
    },
    2,
  );
  for (const key of [
    'currentVersion',
    'previousVersion',
    'previousVersionState',
    'previousGraceEndsAt',
    'registryVerification',
  ]) {
    assert.deepEqual(withReport.data?.[key], inProcess.data?.[key], key);
  }
  assert.match(
    withReport.conditions.find((c) => c.type === 'Applied')?.message ?? '',
    /; registry verification \(warn\): quay\.io rejected$/,
  );
  // Without a readable report: the Job's conditions alone, as before.
  const bare = buildStatusReport(job, 2);
  assert.equal(bare.data?.currentVersion, undefined);
  assert.equal(bare.data?.registryVerification, undefined);
  assert.equal(conditions(job).Applied, 'True/JobSucceeded');
});

test('entitlementExpiresAt joins the data when given, beside what the outcome reports', () => {
  const applied: WorkOutcome = {
    kind: 'applied',
    target,
    result: {
      outcome: 'unchanged',
      secretName: target.secretName,
      secretPath: 'p',
      version: '2',
      versionPath: 'v',
      dryRun: false,
    },
  };
  const report = buildStatusReport(applied, 1, new Date(), {
    data: { entitlementExpiresAt: '2027-01-01T00:00:00Z' },
  });
  assert.equal(report.data?.entitlementExpiresAt, '2027-01-01T00:00:00Z');
  assert.equal(report.data?.secretVersion, '2');
  assert.equal('entitlementExpiresAt' in (buildStatusReport(applied, 1).data ?? {}), false);
});

test('a failure carries what was found before it: the verification, the version still served after a refusal', () => {
  const refused = withFacts(
    new PullSecretError('CREDENTIALS_REJECTED', 'registry refused quay.io (HTTP 401)'),
    {
      verification: { mode: 'enforce', results: { 'quay.io': 'rejected' } },
      servedVersion: '4',
    },
  );
  const report = buildStatusReport({ kind: 'failed', target, error: toPullSecretError(refused) }, 5);
  assert.equal(report.data?.errorCode, 'CREDENTIALS_REJECTED');
  assert.equal(report.data?.currentVersion, '4');
  assert.deepEqual(report.data?.registryVerification, {
    mode: 'enforce',
    results: { 'quay.io': 'rejected' },
  });
  const available = report.conditions.find((c) => c.type === 'Available');
  assert.equal(`${available?.status}/${available?.reason}`, 'False/CredentialsRejected');
  assert.match(available?.message ?? '', /registry refused quay\.io .*; version 4 is still served$/);
  // The error is the one wrapped: same code and retryability for the outcome table.
  assert.equal(toPullSecretError(refused).retryable, false);
  // A failure after an accepted check (the store write failed): the verification, no served version.
  const late = withFacts(new PullSecretError('STORE_UNAVAILABLE', 'store down'), {
    verification: { mode: 'warn', results: { 'quay.io': 'accepted' } },
  });
  const after = buildStatusReport({ kind: 'failed', target, error: toPullSecretError(late) }, 5);
  assert.equal(after.data?.currentVersion, undefined);
  assert.deepEqual(after.data?.registryVerification, { mode: 'warn', results: { 'quay.io': 'accepted' } });
  assert.equal(toPullSecretError(late).retryable, true);
});

test('a failed Job reports the verification its last pod found (a failure after the check)', () => {
  const report = buildStatusReport(
    {
      kind: 'job-failed',
      target,
      jobName: 'pullsecret-c1-gen2',
      jobNamespace: 'hyperfleet-system',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
      report: {
        status: 'failure',
        reason: 'KubernetesUnavailable',
        message: 'Kubernetes API unreachable',
        registryVerification: { mode: 'warn', results: { 'quay.io': 'accepted' } },
      },
    },
    2,
  );
  assert.deepEqual(report.data?.registryVerification, { mode: 'warn', results: { 'quay.io': 'accepted' } });
  assert.equal(report.data?.jobName, 'pullsecret-c1-gen2');
});

test('job-succeeded with a pin in the pod report: RolledBackPinned and data.pin, as in-process', () => {
  const pin = { sourceVersion: '1', version: '3', by: 'cli (ops)', at: '2026-01-01T00:00:00.000Z' };
  const report = buildStatusReport(
    {
      kind: 'job-succeeded',
      target,
      jobName: 'pullsecret-c1-gen2',
      jobNamespace: 'hyperfleet-system',
      report: { status: 'success', reason: 'SecretUpToDate', message: 'Unchanged', currentVersion: '3', pin },
    },
    2,
  );
  const applied = report.conditions.find((c) => c.type === 'Applied');
  assert.equal(applied?.reason, 'RolledBackPinned');
  assert.match(applied?.message ?? '', /rolled back to version 1's content, pinned by cli \(ops\)$/);
  assert.deepEqual(report.data?.pin, pin);
});
