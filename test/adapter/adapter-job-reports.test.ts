import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// Job mode reports on completion (issue 15, item 5): a Job still running when its event's wait ends
// is reported JobInProgress; when it finishes later, its outcome is reported at once, without
// another event. The test server stores the Jobs without running them; the test plays the Job
// controller (setJobStatus), as in the launcher's tests.

const NS = 'hyperfleet-system';

function complete(): Record<string, unknown> {
  return {
    succeeded: 1,
    active: 0,
    conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date().toISOString() }],
  };
}

function failed(): Record<string, unknown> {
  return {
    failed: 3,
    active: 0,
    conditions: [
      {
        type: 'Failed',
        status: 'True',
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
        lastTransitionTime: new Date().toISOString(),
      },
    ],
  };
}

describe('Job mode: a Job finishing after its event is reported without a new event', () => {
  let kube: KubernetesTestServer;
  let stack: AdapterStack;

  const jobTotal = async (result: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    return Number(
      new RegExp(`^pullsecret_job_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? '0',
    );
  };

  /** A cluster whose event has ended with JobInProgress; returns its id and Job name. */
  async function inProgress(): Promise<{ id: string; job: string }> {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/JobInProgress');
    return { id: cluster.id, job: `pullsecret-${cluster.id}-gen1` };
  }

  before(async () => {
    kube = await startKubernetesTestServer({ namespaces: [NS] });
    stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
      execution: {
        mode: 'job',
        job: { namespace: NS, image: 'pull-secret:test', timeoutSeconds: 60, waitSeconds: 1 },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
  });

  test('a Job that completes after the wait is reported JobSucceeded and counted', async () => {
    const { id, job } = await inProgress();
    const successes = await jobTotal('success');
    const reportsBefore = stack.logs.filter((l) => l.includes('"report-status"') && l.includes(id)).length;
    kube.setJobStatus(NS, job, complete());
    const status = await stack.waitForStatus(id, (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded');
    assert.equal(conditionOf(status, 'Available'), 'True/SecretAvailable');
    assert.equal(status.observed_generation, 1);
    assert.equal(status.data?.jobName, job);
    assert.equal(await jobTotal('success'), successes + 1);
    // One report for the finished Job, and the Job was not launched again.
    await sleep(300);
    assert.equal(
      stack.logs.filter((l) => l.includes('"report-status"') && l.includes(id)).length,
      reportsBefore + 1,
    );
    assert.equal(
      kube.listObjects('jobs', NS).filter((j) => j.metadata.labels?.['cluster-id'] === id).length,
      1,
    );
  });

  test('a Job that fails after the wait is reported JobFailed', async () => {
    const { id, job } = await inProgress();
    const failures = await jobTotal('failure');
    kube.setJobStatus(NS, job, failed());
    const status = await stack.waitForStatus(id, (s) => conditionOf(s, 'Applied') === 'False/JobFailed');
    assert.match(status.conditions.find((c) => c.type === 'Applied')?.message ?? '', /BackoffLimitExceeded/);
    assert.equal(await jobTotal('failure'), failures + 1);
  });

  test("an older generation's Job finishing never overwrites the cluster's newer generation", async () => {
    const { id, job } = await inProgress();
    // The spec changes (generation 2) but no event has come yet; then the generation 1 Job finishes.
    const spec = stack.api.getCluster(id)?.spec ?? {};
    const patched = await stack.request('PATCH', `/clusters/${id}`, {
      spec: {
        ...spec,
        pullSecret: { data: VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com') },
      },
    });
    assert.ok(patched.ok, `PATCH answered ${patched.status}`);
    assert.equal(stack.api.getCluster(id)?.generation, 2);
    kube.setJobStatus(NS, job, complete());
    // The reconcile reads the cluster: it works on (and reports) generation 2, never generation 1's outcome.
    const status = await stack.waitForStatus(id, (s) => s.observed_generation === 2);
    assert.notEqual(conditionOf(status, 'Applied'), 'True/JobSucceeded');
    assert.ok(kube.getObject('jobs', NS, `pullsecret-${id}-gen2`), 'the generation 2 Job was launched');
    await sleep(300);
    assert.equal(stack.api.listStatuses(id).find((s) => s.adapter === 'pullsecret')?.observed_generation, 2);
  });

  test('with two replicas, only the one that reported the Job in progress reports its end', async () => {
    const replica = await stack.startReplica();
    // The replica's Job watch has listed before the Job finishes.
    for (
      let i = 0;
      i < 200 &&
      !/pullsecret_kubernetes_cache_objects\{resource="jobs"\} [1-9]/.test(
        await (await fetch(`http://127.0.0.1:${replica.adapter.metricsPort}/metrics`)).text(),
      );
      i++
    )
      await sleep(10);
    const { id, job } = await inProgress();
    kube.setJobStatus(NS, job, complete());
    await stack.waitForStatus(id, (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded');
    await sleep(500);
    assert.equal(stack.logs.filter((l) => l.includes('"job-finished"') && l.includes(id)).length, 1);
    assert.equal(
      replica.logs.filter((l) => l.includes(id)).length,
      0,
      'the other replica did nothing for this cluster',
    );
  });

  test('a Job that completes within the wait is reported once, by its event', async () => {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    const job = `pullsecret-${cluster.id}-gen1`;
    await stack.publish(cluster);
    for (let i = 0; i < 100 && kube.getObject('jobs', NS, job) === undefined; i++) await sleep(10);
    kube.setJobStatus(NS, job, complete());
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded');
    await sleep(500);
    assert.equal(stack.logs.filter((l) => l.includes('"report-status"') && l.includes(cluster.id)).length, 1);
  });
});
