import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { until } from '../support/until.js';
import { KubeConfig } from '@kubernetes/client-node';
import { PullSecretError } from '../../src/errors/index.js';
import { PullSecretJobLauncher, type JobLaunchRequest } from '../../src/kube/job-launcher.js';
import { buildJobDataSecret, buildPullSecretJob } from '../../src/kube/job-manifest.js';
import {
  startKubernetesTestServer,
  type KubeObject,
  type KubernetesTestServer,
} from '../servers/kubernetes/server.js';

// The launcher against the Kubernetes test server, with Job status driven by the test (the server
// does not run these Jobs): creation order and ownership, reuse, the watch's recovery paths, errors.

const NS = 'hyperfleet-system';
const DATA = Buffer.from('{"auths":{"quay.io":{"auth":"bGF1bmNoZXI6bGF1bmNoZXItcGFzc3dvcmQ="}}}');
const FAST = { maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 50 };

function isCode(code: string, retryable?: boolean) {
  return (err: unknown) =>
    err instanceof PullSecretError &&
    err.code === code &&
    (retryable === undefined || err.retryable === retryable);
}

function complete(): Record<string, unknown> {
  return {
    succeeded: 1,
    active: 0,
    conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }],
  };
}

function failed(reason: string, message: string): Record<string, unknown> {
  return {
    failed: 3,
    active: 0,
    conditions: [
      { type: 'Failed', status: 'True', reason, message, lastTransitionTime: '2025-01-01T00:00:00Z' },
    ],
  };
}

describe('Job launcher against the test API server', () => {
  let server: KubernetesTestServer;
  let launcher: PullSecretJobLauncher;
  let ids = 0;
  const logs: Array<Record<string, unknown>> = [];
  const logger = {
    info: (fields: Record<string, unknown>, message: string) =>
      void logs.push({ level: 'info', message, ...fields }),
    debug: (fields: Record<string, unknown>, message: string) =>
      void logs.push({ level: 'debug', message, ...fields }),
  };

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: [NS] });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(server.kubeconfigPath);
    launcher = new PullSecretJobLauncher({ kubeConfig, watchRetry: FAST, logger });
  });
  after(() => server.close());

  function request(extra: Partial<JobLaunchRequest> = {}): JobLaunchRequest {
    return {
      clusterId: `cls-l${++ids}`,
      generation: 1,
      pullSecret: DATA,
      env: { SECRET_STORE: 'local' },
      image: 'registry.example/pull-secret:1.0',
      ...extra,
    };
  }

  async function jobAppears(name: string): Promise<KubeObject> {
    for (let i = 0; i < 500; i++) {
      const job = server.getObject('jobs', NS, name);
      // The launcher watches once the data Secret is in place.
      if (
        job !== undefined &&
        server.getObject(
          'secrets',
          NS,
          `cluster-${String(job.metadata.labels?.['cluster-id'])}-pullsecret-data`,
        ) !== undefined
      )
        return job;
      await sleep(5);
    }
    assert.fail(`Job ${name} never appeared`);
  }

  it('creates the Job, then the data Secret owned by it, and reports Complete as succeeded', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    server.resetCalls();
    const running = launcher.launch(req);
    const job = await jobAppears(name);
    server.setJobStatus(NS, name, complete());
    const result = await running;
    assert.deepEqual(
      { ...result, result: undefined },
      {
        outcome: 'succeeded',
        jobName: name,
        namespace: NS,
        reused: false,
        message: `Job "${NS}/${name}" succeeded`,
        result: undefined,
      },
    );
    assert.deepEqual(result.result, {
      status: 'success',
      reason: 'JobSucceeded',
      message: `Job ${name} completed`,
      cluster_id: req.clusterId,
      timestamp: '2025-01-01T00:00:00.000Z',
    });
    const secret = server.getObject('secrets', NS, `cluster-${req.clusterId}-pullsecret-data`);
    assert.deepEqual(secret?.metadata.ownerReferences, [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name,
        uid: job.metadata.uid,
        controller: false,
        blockOwnerDeletion: false,
      },
    ]);
    const writes = server
      .requests()
      .filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))
      .map((r) => `${r.method} ${r.resource}`);
    assert.deepEqual(writes, ['POST jobs', 'POST secrets']);
    const env = (job.spec as { template: { spec: { containers: Array<{ env: unknown[] }> } } }).template.spec
      .containers[0]?.env;
    assert.deepEqual(env?.slice(0, 3), [
      { name: 'CLUSTER_ID', value: req.clusterId },
      { name: 'NODE_OPTIONS', value: '--max-semi-space-size=1' },
      { name: 'SECRET_STORE', value: 'local' },
    ]);

    server.resetCalls();
    const again = await launcher.launch(req);
    assert.equal(again.reused, true);
    assert.equal(again.outcome, 'succeeded');
    assert.equal(server.writes(), 0, 'a finished Job is reused without any write');
  });

  it('runs a finished Job of the same generation again when the pin token changed, else reuses it', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    const first = launcher.launch(req);
    const job = await jobAppears(name);
    assert.equal(job.metadata.labels?.['pullsecret.hyperfleet.io/pin'], 'none');
    server.setJobStatus(NS, name, complete());
    assert.equal((await first).reused, false);

    const pinned = { ...req, pinToken: 'v3.at-20250101T000000Z' };
    const second = launcher.launch(pinned);
    await until('the Job created again', () => {
      const j = server.getObject('jobs', NS, name);
      return j !== undefined && j.metadata.uid !== job.metadata.uid;
    });
    const rerun = await jobAppears(name);
    assert.equal(rerun.metadata.labels?.['pullsecret.hyperfleet.io/pin'], pinned.pinToken);
    server.setJobStatus(NS, name, complete());
    assert.equal((await second).reused, false);
    assert.ok(logs.some((l) => l.message === 'pin changed since the finished job ran; running it again'));

    server.resetCalls();
    const same = await launcher.launch(pinned);
    assert.equal(same.reused, true);
    assert.equal(server.writes(), 0, 'an unchanged pin token reuses the finished Job without any write');
  });

  it('watches a running Job of the same generation under another pin token rather than deleting it', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    const first = launcher.launch(req);
    const job = await jobAppears(name);
    const second = launcher.launch({ ...req, pinToken: 'v2.later' });
    await until('the second launch watching', () =>
      logs.some((l) => l.cluster_id === req.clusterId && l.message === 'reusing existing job'),
    );
    server.setJobStatus(NS, name, complete());
    assert.equal((await first).reused, false);
    assert.equal((await second).reused, true);
    assert.equal(server.getObject('jobs', NS, name)?.metadata.uid, job.metadata.uid);
  });

  it('sets KUBERNETES_TARGET and MANAGEMENT_NAMESPACE when asked to provision the Kubernetes Secret', async () => {
    const req = request({ kubernetesSecret: {} });
    const running = launcher.launch(req);
    const job = await jobAppears(`pullsecret-${req.clusterId}-gen1`);
    server.setJobStatus(NS, job.metadata.name ?? '', complete());
    await running;
    const env =
      (
        job.spec as {
          template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } };
        }
      ).template.spec.containers[0]?.env ?? [];
    assert.equal(env.find((e) => e.name === 'KUBERNETES_TARGET')?.value, 'api');
    assert.equal(env.find((e) => e.name === 'MANAGEMENT_NAMESPACE')?.value, `clusters-${req.clusterId}`);
  });

  it('joins a running Job of the same generation instead of creating another', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    const first = launcher.launch(req);
    await jobAppears(name);
    server.resetCalls();
    const second = launcher.launch(req);
    await sleep(50);
    server.setJobStatus(
      NS,
      name,
      failed(
        'BackoffLimitExceeded',
        'Job has reached the specified backoff limit (last pod exited with code 1)',
      ),
    );
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.reused, false);
    assert.equal(b.reused, true);
    for (const r of [a, b]) {
      assert.equal(r.outcome, 'failed');
      assert.equal(r.result.reason, 'BackoffLimitExceeded');
      assert.match(
        r.message,
        /failed: BackoffLimitExceeded: Job has reached the specified backoff limit \(last pod exited with code 1\)$/,
      );
    }
    assert.equal(server.calls('POST', 'jobs'), 0);
    assert.equal(server.writes(), 0, 'the data Secret was already owned by the Job');
  });

  it('recreates a missing data Secret when it reuses a running Job', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    const controller = new AbortController();
    const first = launcher.launch(req, { signal: controller.signal });
    const job = await jobAppears(name);
    controller.abort();
    await assert.rejects(first, isCode('ABORTED'));
    server.deleteObject('secrets', NS, `cluster-${req.clusterId}-pullsecret-data`);
    const second = launcher.launch(req);
    await jobAppears(name);
    const secret = server.getObject('secrets', NS, `cluster-${req.clusterId}-pullsecret-data`);
    assert.equal((secret?.metadata.ownerReferences as Array<{ uid: string }>)[0]?.uid, job.metadata.uid);
    server.setJobStatus(NS, name, complete());
    assert.equal((await second).reused, true);
  });

  it('replaces the data Secret of an earlier generation before the new Job can start', async () => {
    const gen1 = request();
    const running1 = launcher.launch(gen1);
    const job1 = await jobAppears(`pullsecret-${gen1.clusterId}-gen1`);
    server.setJobStatus(NS, job1.metadata.name ?? '', complete());
    await running1;
    const secretName = `cluster-${gen1.clusterId}-pullsecret-data`;
    const before = server.getObject('secrets', NS, secretName);

    server.resetCalls();
    const newData = Buffer.from('{"auths":{"quay.io":{"auth":"Z2VuMjpnZW4yLXBhc3N3b3Jk"}}}');
    const running2 = launcher.launch({ ...gen1, generation: 2, pullSecret: newData });
    const job2 = await jobAppears(`pullsecret-${gen1.clusterId}-gen2`);
    server.setJobStatus(NS, job2.metadata.name ?? '', complete());
    assert.equal((await running2).reused, false);
    const writes = server
      .requests()
      .filter((r) => ['POST', 'PUT', 'DELETE'].includes(r.method))
      .map((r) => `${r.method} ${r.resource}`);
    assert.deepEqual(writes, ['DELETE secrets', 'POST jobs', 'POST secrets']);
    const after = server.getObject('secrets', NS, secretName);
    assert.notEqual(after?.metadata.uid, before?.metadata.uid);
    assert.equal((after?.data as Record<string, string>).pullsecret, newData.toString('base64'));
    assert.equal(after?.metadata.labels?.generation, '2');
    assert.equal((after?.metadata.ownerReferences as Array<{ uid: string }>)[0]?.uid, job2.metadata.uid);
  });

  it('re-lists after a dropped watch, a refused watch and an expired resourceVersion', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    server.resetCalls();
    server.injectFault({ method: 'WATCH', resource: 'jobs', reset: true });
    server.injectFault({ method: 'WATCH', resource: 'jobs', status: 503 });
    // When the third watch arrives (after its list), 2,100 changes push its resourceVersion out of the
    // server's history before it is served: the churn runs synchronously inside the server's handler.
    const churn = () => {
      for (let i = 0; i < 1050; i++) {
        server.seed({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `churn-${i}`, namespace: 'default' },
        });
        server.deleteObject('secrets', 'default', `churn-${i}`);
      }
    };
    server.injectFault({ method: 'WATCH', resource: 'jobs', delayMs: 1, onTaken: churn });
    const running = launcher.launch(req);
    await jobAppears(name);
    // Wait (generously: a loaded machine slows the re-watch backoff) for the fourth watch.
    for (let i = 0; i < 750 && server.calls('WATCH', 'jobs') < 4; i++) await sleep(20);
    server.setJobStatus(NS, name, complete());
    assert.equal((await running).outcome, 'succeeded');
    assert.ok(server.calls('WATCH', 'jobs') >= 4, `watches: ${server.calls('WATCH', 'jobs')}`);
    assert.ok(server.calls('GET', 'jobs') >= 4, 'each watch follows a fresh list');
    const relists = logs.filter((l) => l.job === name && l.message === 'job watch ended, listing again');
    assert.deepEqual(
      relists.map((l) => l.expired),
      [false, false, true],
    );
  });

  it('logs constant messages with the cluster and Job as fields, never the pull secret', () => {
    const text = JSON.stringify(logs);
    assert.ok(
      logs.some(
        (l) =>
          l.message === 'job created' &&
          typeof l.cluster_id === 'string' &&
          l.namespace === NS &&
          l.generation === 1,
      ),
    );
    for (const needle of [
      DATA.toString(),
      DATA.toString('base64'),
      'bGF1bmNoZXI6bGF1bmNoZXItcGFzc3dvcmQ=',
      'launcher-password',
    ])
      assert.ok(!text.includes(needle));
  });

  it('fails retryably when the Job is deleted while watched, and times out retryably', async () => {
    const req = request();
    const name = `pullsecret-${req.clusterId}-gen1`;
    const running = launcher.launch(req);
    await jobAppears(name);
    await sleep(50);
    server.deleteObject('jobs', NS, name);
    await assert.rejects(
      running,
      (err) =>
        isCode('JOB_FAILED', true)(err) && /was deleted before it finished/.test((err as Error).message),
    );

    const slow = request();
    await assert.rejects(
      launcher.launch(slow, { timeoutMs: 300 }),
      (err) =>
        isCode('JOB_IN_PROGRESS', true)(err) && /did not finish within 300 ms/.test((err as Error).message),
    );
  });

  it('refuses unmanaged objects, credentials in env and a missing namespace, writing nothing', async () => {
    const req = request();
    server.seed({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `pullsecret-${req.clusterId}-gen1`, namespace: NS },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] } } },
    });
    const other = request();
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `cluster-${other.clusterId}-pullsecret-data`, namespace: NS },
      data: {},
    });
    server.resetCalls();
    await assert.rejects(launcher.launch(req), isCode('SECRET_UNMANAGED'));
    await assert.rejects(launcher.launch(other), isCode('SECRET_UNMANAGED'));
    await assert.rejects(
      launcher.launch(request({ env: { NOTE: 'bGF1bmNoZXI6bGF1bmNoZXItcGFzc3dvcmQ=' } })),
      (err) => isCode('CONFIG_INVALID')(err) && !(err as Error).message.includes('bGF1bmNo'),
    );
    await assert.rejects(
      launcher.launch(request({ env: { CLUSTER_ID: 'someone-else' } })),
      isCode('CONFIG_INVALID'),
    );
    await assert.rejects(
      launcher.launch(request({ namespace: 'missing-ns' })),
      (err) =>
        isCode('CONFIG_INVALID')(err) && /namespace "missing-ns" does not exist/.test((err as Error).message),
    );
    assert.equal(server.writes(), 1, 'only the refused Job create in the missing namespace');
  });

  it('a newer generation stops the older one still running (Foreground) and waits until it is gone', async () => {
    const older = request({ generation: 1 });
    const name1 = `pullsecret-${older.clusterId}-gen1`;
    const first = launcher.launch(older, { timeoutMs: 30_000 }).catch((err: unknown) => err);
    await jobAppears(name1);
    server.setJobStatus(NS, name1, { active: 1, ready: 1 });
    const second = launcher.launch({ ...older, generation: 2 }, { timeoutMs: 30_000 });
    for (
      let i = 0;
      i < 500 && server.getObject('jobs', NS, name1)?.metadata.deletionTimestamp === undefined;
      i++
    )
      await sleep(5);
    assert.ok(
      server.getObject('jobs', NS, name1)?.metadata.deletionTimestamp,
      'the older Job is being deleted in the foreground',
    );
    assert.equal(
      server.getObject('jobs', NS, `pullsecret-${older.clusterId}-gen2`),
      undefined,
      'no newer Job while the older pod may still write',
    );
    server.deleteObject('jobs', NS, name1);
    const name2 = `pullsecret-${older.clusterId}-gen2`;
    await jobAppears(name2);
    server.setJobStatus(NS, name2, complete());
    assert.equal((await second).outcome, 'succeeded');
    assert.ok(isCode('JOB_FAILED', true)(await first), 'the older launch learns its Job was deleted');
  });

  it("cleanup removes every generation's Jobs and data Secrets by label, never unmanaged ones, and is idempotent", async () => {
    const clusterId = `cls-l${++ids}`;
    for (const generation of [1, 2]) {
      const job = buildPullSecretJob({
        clusterId,
        generation,
        env: {},
        image: 'registry.example/pull-secret:1.0',
        namespace: NS,
      }) as KubeObject;
      server.seed(job);
      server.setJobStatus(NS, job.metadata.name ?? '', complete());
    }
    const foreign = buildPullSecretJob({
      clusterId,
      generation: 3,
      env: {},
      image: 'registry.example/pull-secret:1.0',
      namespace: NS,
    }) as KubeObject;
    server.seed({
      ...foreign,
      metadata: {
        ...foreign.metadata,
        name: `other-${clusterId}`,
        labels: { ...foreign.metadata.labels, 'managed-by': 'someone-else' },
      },
    });
    // The data Secret (one per cluster) goes by its fixed name: Secrets are never listed.
    const legacy = buildJobDataSecret({
      clusterId,
      generation: 1,
      namespace: NS,
      pullSecret: DATA,
    }) as KubeObject;
    server.seed({
      ...legacy,
      metadata: { ...legacy.metadata, labels: { 'managed-by': 'hyperfleet', 'cluster-id': clusterId } },
    });

    assert.deepEqual(
      await launcher.removeClusterJobs(clusterId, { namespace: NS, waitMs: 1000, pollMs: 10 }),
      { jobs: 2, dataSecrets: 1 },
    );
    const left = server
      .listObjects('jobs', NS)
      .filter((j) => j.metadata.labels?.['cluster-id'] === clusterId)
      .map((j) => j.metadata.name);
    assert.deepEqual(left, [`other-${clusterId}`]);
    assert.equal(server.getObject('secrets', NS, `cluster-${clusterId}-pullsecret-data`), undefined);
    assert.deepEqual(
      await launcher.removeClusterJobs(clusterId, { namespace: NS }),
      { jobs: 0, dataSecrets: 0 },
      'already gone counts as done',
    );
  });

  it('cleanup reports CLEANUP_PENDING while a Job is still terminating, and completes once it is gone', async () => {
    const clusterId = `cls-l${++ids}`;
    const job = buildPullSecretJob({
      clusterId,
      generation: 4,
      env: {},
      image: 'registry.example/pull-secret:1.0',
      namespace: NS,
    }) as KubeObject;
    server.seed(job);
    server.setJobStatus(NS, job.metadata.name ?? '', { active: 1, ready: 1 });
    await assert.rejects(
      launcher.removeClusterJobs(clusterId, { namespace: NS, waitMs: 100, pollMs: 10 }),
      isCode('CLEANUP_PENDING', true),
    );
    assert.ok(server.getObject('jobs', NS, job.metadata.name ?? '')?.metadata.deletionTimestamp);
    server.deleteObject('jobs', NS, job.metadata.name ?? '');
    assert.deepEqual(
      await launcher.removeClusterJobs(clusterId, { namespace: NS, waitMs: 100, pollMs: 10 }),
      { jobs: 0, dataSecrets: 0 },
    );
  });
});
