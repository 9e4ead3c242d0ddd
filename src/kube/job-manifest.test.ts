import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Job } from 'kubernetes-models/batch/v1';
import { Secret } from 'kubernetes-models/v1';
import { PullSecretError } from '../errors/index.js';
import { storeFactories, storeFactory } from '../stores/registry.js';
import {
  buildJobDataSecret,
  buildPullSecretJob,
  DATA_SECRET_KEY,
  jobDataSecretName,
  POD_RESULTS_PATH,
  pullSecretJobName,
  type PullSecretJobInput,
} from './job-manifest.js';

const CLUSTER = '0195f4a2-7c1e-7b3a-9d2e-4f5a6b7c8d9e';
const RAW = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpzM2NyZXQtdmFsdWU="}}}');
const BASE: PullSecretJobInput = {
  clusterId: CLUSTER,
  generation: 7,
  image: 'registry.example/pull-secret:1.0',
  env: { CLUSTER_ID: CLUSTER, SECRET_STORE: 'gcp', GCP_PROJECT_ID: 'p-1' },
};

function isCode(code: string, pattern?: RegExp) {
  return (err: unknown) =>
    err instanceof PullSecretError &&
    err.code === code &&
    (pattern === undefined || pattern.test(err.message));
}

/** kubernetes-models validates against the API's OpenAPI schema and throws on any violation. */
function validateJob(obj: unknown): void {
  new Job(obj as never).validate();
}

describe('buildPullSecretJob', () => {
  const job = buildPullSecretJob(BASE);
  const pod = job.spec?.template.spec;
  const container = pod?.containers[0];

  it('names and labels the Job as documented, and passes the API schema', () => {
    validateJob(job);
    assert.equal(job.metadata?.name, `pullsecret-${CLUSTER}-gen7`);
    assert.equal(job.metadata?.namespace, 'hyperfleet-system');
    const labels = {
      'managed-by': 'hyperfleet',
      'cluster-id': CLUSTER,
      generation: '7',
      app: 'pullsecret-job',
    };
    // The pin state the Job was created under is the Job's own (docs/retention.md), not its pods'.
    assert.deepEqual(job.metadata?.labels, { ...labels, 'pullsecret.hyperfleet.io/pin': 'none' });
    assert.deepEqual(job.spec?.template.metadata?.labels, labels);
  });

  it('runs non-root, read-only, without privileges, as the job service account', () => {
    assert.equal(pod?.serviceAccountName, 'pullsecret-adapter-job');
    assert.equal(pod?.restartPolicy, 'Never');
    assert.deepEqual(pod?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(container?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(container?.command, ['pull-secret', 'run-job', 'pull-secret']);
  });

  it('bounds the Job: retries, deadline, TTL, resources; exit code 2 fails at once', () => {
    assert.equal(job.spec?.backoffLimit, 2);
    assert.equal(job.spec?.activeDeadlineSeconds, 300);
    assert.equal(job.spec?.ttlSecondsAfterFinished, 3600);
    assert.deepEqual(container?.resources, {
      requests: { cpu: '50m', memory: '64Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    assert.deepEqual(job.spec?.podFailurePolicy?.rules[0], {
      action: 'FailJob',
      onExitCodes: { containerName: 'pull-secret', operator: 'In', values: [2] },
    });
  });

  it('passes settings as plain env and the pull secret only by secretKeyRef', () => {
    assert.deepEqual(container?.env, [
      { name: 'CLUSTER_ID', value: CLUSTER },
      { name: 'GCP_PROJECT_ID', value: 'p-1' },
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' },
      { name: 'SECRET_STORE', value: 'gcp' },
      {
        name: 'PULL_SECRET_DATA',
        valueFrom: {
          secretKeyRef: { name: `cluster-${CLUSTER}-pullsecret-data`, key: DATA_SECRET_KEY, optional: false },
        },
      },
      { name: 'RESULTS_PATH', value: POD_RESULTS_PATH },
      { name: 'TERMINATION_MESSAGE_PATH', value: '/dev/termination-log' },
    ]);
    // The result directory and /tmp are writable emptyDirs; nothing else is.
    assert.deepEqual(
      container?.volumeMounts?.map((m) => m.mountPath),
      ['/tmp', '/tmp/result'],
    );
    assert.ok(pod?.volumes?.every((v) => v.emptyDir !== undefined));
    assert.ok(POD_RESULTS_PATH.startsWith('/tmp/result/'));
  });

  it('takes overrides and still passes the schema', () => {
    const custom = buildPullSecretJob({
      ...BASE,
      namespace: 'jobs',
      command: ['/app/pull-secret', 'run-job', 'pull-secret'],
      serviceAccountName: 'sa',
      imagePullPolicy: 'IfNotPresent',
      backoffLimit: 0,
      activeDeadlineSeconds: 60,
      ttlSecondsAfterFinished: 0,
      resources: { limits: { memory: '128Mi' } },
    });
    validateJob(custom);
    assert.equal(custom.metadata?.namespace, 'jobs');
    assert.equal(custom.spec?.backoffLimit, 0);
    assert.equal(custom.spec?.ttlSecondsAfterFinished, 0);
    assert.deepEqual(custom.spec?.template.spec?.containers[0]?.resources?.limits, {
      cpu: '500m',
      memory: '128Mi',
    });
    assert.equal(custom.spec?.template.spec?.containers[0]?.imagePullPolicy, 'IfNotPresent');
  });

  it('lets the env map set its own NODE_OPTIONS', () => {
    const env = buildPullSecretJob({ ...BASE, env: { ...BASE.env, NODE_OPTIONS: '--max-old-space-size=64' } })
      .spec?.template.spec?.containers[0]?.env;
    assert.deepEqual(
      env?.filter((v) => v.name === 'NODE_OPTIONS'),
      [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=64' }],
    );
  });

  it('refuses reserved or malformed env names, and a missing image', () => {
    assert.throws(
      () => buildPullSecretJob({ ...BASE, env: { PULL_SECRET_DATA: 'x' } }),
      isCode('CONFIG_INVALID', /PULL_SECRET_DATA is set by the launcher/),
    );
    assert.throws(
      () => buildPullSecretJob({ ...BASE, env: { RESULTS_PATH: '/x' } }),
      isCode('CONFIG_INVALID'),
    );
    assert.throws(
      () => buildPullSecretJob({ ...BASE, env: { 'BAD-NAME': 'x' } }),
      isCode('CONFIG_INVALID', /"BAD-NAME"/),
    );
    assert.throws(() => buildPullSecretJob({ ...BASE, image: ' ' }), isCode('CONFIG_MISSING'));
    assert.throws(
      () => buildPullSecretJob({ ...BASE, backoffLimit: -1 }),
      isCode('CONFIG_INVALID', /backoffLimit/),
    );
  });
});

describe("the store's Job pod metadata", () => {
  const WORKLOAD_IDENTITY = 'azure.workload.identity/use';
  const ownLabels = {
    'managed-by': 'hyperfleet',
    'cluster-id': CLUSTER,
    generation: '7',
    app: 'pullsecret-job',
  };

  it('puts the Azure workload identity label on the pod template only, and the manifest passes the schema', () => {
    const job = buildPullSecretJob({ ...BASE, pod: storeFactory('azure').jobPod });
    validateJob(job);
    assert.deepEqual(job.spec?.template.metadata?.labels, { ...ownLabels, [WORKLOAD_IDENTITY]: 'true' });
    assert.deepEqual(
      job.metadata?.labels,
      { ...ownLabels, 'pullsecret.hyperfleet.io/pin': 'none' },
      'the Job object itself is not mutated by the webhook',
    );
  });

  it('adds nothing for the other stores (AWS IRSA needs only the service account annotation)', () => {
    for (const factory of storeFactories().filter((f) => f.kind !== 'azure')) {
      const job = buildPullSecretJob({ ...BASE, pod: factory.jobPod });
      validateJob(job);
      assert.deepEqual(job.spec?.template.metadata, { labels: ownLabels }, factory.kind);
    }
  });

  it("keeps the Job's own labels over a store's, and passes annotations through", () => {
    const job = buildPullSecretJob({
      ...BASE,
      pod: { labels: { app: 'other', extra: 'x' }, annotations: { 'example.com/a': 'b' } },
    });
    validateJob(job);
    assert.deepEqual(job.spec?.template.metadata, {
      labels: { ...ownLabels, extra: 'x' },
      annotations: { 'example.com/a': 'b' },
    });
  });
});

describe('Job names', () => {
  it('fits UUID cluster ids and says how long an id may be when it does not fit', () => {
    assert.equal(pullSecretJobName(CLUSTER, 123456), `pullsecret-${CLUSTER}-gen123456`);
    const long = `c${'x'.repeat(46)}`;
    assert.doesNotThrow(() => pullSecretJobName(long, 1));
    const tooLong = `c${'x'.repeat(47)}`;
    assert.throws(
      () => pullSecretJobName(tooLong, 1),
      isCode(
        'IDENTIFIER_INVALID',
        /has 64 characters and Kubernetes allows 63, so the id may have at most 47 at generation 1/,
      ),
    );
    assert.throws(
      () => buildPullSecretJob({ ...BASE, clusterId: tooLong }),
      isCode('IDENTIFIER_INVALID', /too long for Job mode/),
    );
  });

  it('refuses bad ids and generations without rewriting them', () => {
    assert.throws(() => pullSecretJobName('Cluster_1', 1), isCode('IDENTIFIER_INVALID', /cluster id/));
    assert.throws(() => pullSecretJobName(CLUSTER, -1), isCode('IDENTIFIER_INVALID', /generation/));
    assert.throws(() => pullSecretJobName(CLUSTER, 1.5), isCode('IDENTIFIER_INVALID', /generation/));
    assert.equal(jobDataSecretName(CLUSTER), `cluster-${CLUSTER}-pullsecret-data`);
  });
});

describe('buildJobDataSecret', () => {
  it('builds an Opaque Secret owned by the Job, without blocking its deletion', () => {
    const secret = buildJobDataSecret({
      clusterId: CLUSTER,
      generation: 7,
      pullSecret: RAW,
      owner: { name: `pullsecret-${CLUSTER}-gen7`, uid: 'u-1' },
    });
    new Secret(secret as never).validate();
    assert.equal(secret.type, 'Opaque');
    assert.equal(secret.metadata?.name, `cluster-${CLUSTER}-pullsecret-data`);
    assert.equal(secret.metadata?.namespace, 'hyperfleet-system');
    assert.deepEqual(secret.metadata?.labels, {
      'managed-by': 'hyperfleet',
      'cluster-id': CLUSTER,
      generation: '7',
      app: 'pullsecret-job',
    });
    assert.deepEqual(secret.metadata?.ownerReferences, [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: `pullsecret-${CLUSTER}-gen7`,
        uid: 'u-1',
        controller: false,
        blockOwnerDeletion: false,
      },
    ]);
    assert.deepEqual(Object.keys(secret.data ?? {}), ['pullsecret']);
    assert.deepEqual(Buffer.from(secret.data?.pullsecret ?? '', 'base64'), RAW);
  });

  it('keeps the bytes out of the Job spec', () => {
    const text = JSON.stringify(buildPullSecretJob(BASE));
    for (const needle of [RAW.toString(), RAW.toString('base64'), 'dXNlcjpzM2NyZXQtdmFsdWU=', 's3cret-value'])
      assert.ok(!text.includes(needle));
  });
});
