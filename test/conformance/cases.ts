import assert from 'node:assert/strict';
import { existsSync, renameSync } from 'node:fs';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HOLD_LABEL } from '../../src/dev/upstream-adapters.js';
import type { AdapterStatus, AdapterStatusCreateRequest, Cluster } from '../../src/hyperfleet/index.js';
import { LocalStore } from '../../src/stores/local/index.js';
import {
  conditionOf,
  JOB_NAMESPACE,
  otherPullSecret,
  startConformanceStack,
  type ConformanceStack,
  type ExecutionMode,
} from './harness.js';

// The behaviour HyperFleet's end-to-end test designs (cluster lifecycle, dependency waiting, the
// deletion edge cases that decide when a cluster may be hard-deleted) expect of an adapter, checked
// against the dev stack. docs/status-contract.md links each case.

type Conditions = Pick<AdapterStatus, 'conditions'> | Pick<AdapterStatusCreateRequest, 'conditions'>;

function statusOf(conditions: Conditions, type: string): string | undefined {
  return conditionOf(conditions, type)?.split('/')[0];
}

/** Every condition carries a reason and a message (the suite checks both are non-empty). */
function assertExplained(conditions: Conditions): void {
  for (const c of conditions.conditions)
    assert.ok(c.reason && c.message, `${c.type} needs a reason and a message`);
}

function lastReport(stack: ConformanceStack, clusterId: string): AdapterStatusCreateRequest {
  const report = stack.reportsOf(clusterId).at(-1)?.report;
  assert.ok(report, 'the adapter reported');
  return report;
}

async function provisioned(
  stack: ConformanceStack,
  cluster: Pick<Cluster, 'id'>,
  generation = 1,
): Promise<AdapterStatus> {
  return stack.waitForStatus(
    cluster.id,
    (s) => s.observed_generation === generation && statusOf(s, 'Available') === 'True',
  );
}

async function reconciled(stack: ConformanceStack, clusterId: string, generation: number): Promise<void> {
  await stack.waitFor(`Reconciled=True at generation ${generation}`, () => {
    const c = stack.api.getCluster(clusterId)?.status.conditions.find((x) => x.type === 'Reconciled');
    return c?.status === 'True' && c.observed_generation === generation;
  });
}

async function deleteCluster(stack: ConformanceStack, clusterId: string): Promise<Cluster> {
  const response = await stack.request('DELETE', `/clusters/${clusterId}`);
  assert.equal(response.status, 202);
  return (await response.json()) as Cluster;
}

/** The final report before the hard-delete: Finalized=True, Applied/Available False, Health True. */
function assertFinalized(report: AdapterStatusCreateRequest, generation: number): void {
  assert.equal(report.observed_generation, generation);
  assert.deepEqual(
    ['Finalized', 'Applied', 'Available', 'Health'].map((t) => statusOf(report, t)),
    ['True', 'False', 'False', 'True'],
  );
  assertExplained(report);
}

/** Job mode: the Job of a generation, once its pod runs. */
async function runningJob(stack: ConformanceStack, clusterId: string, generation: number): Promise<void> {
  const name = `pullsecret-${clusterId}-gen${generation}`;
  await stack.waitFor(
    `Job ${name} running`,
    () =>
      (stack.kube?.getObject('jobs', JOB_NAMESPACE, name)?.status as { ready?: number } | undefined)
        ?.ready === 1,
  );
}

/** Job mode: waits until no pod of the cluster runs any more (a killed pod is recorded once it exited). */
async function podsStopped(stack: ConformanceStack, clusterId: string, generation: number): Promise<void> {
  const name = `pullsecret-${clusterId}-gen${generation}`;
  await stack.waitFor(`the pod of ${name} to stop`, () => stack.kube?.jobRuns().some((r) => r.job === name));
}

/**
 * In-process: makes the manifest target fail for one cluster: its namespace path becomes a symlink to
 * a plain file (ENOTDIR). Undoing it swaps in, with one rename, a symlink to the directory moved
 * aside, so the adapter never sees the namespace missing in between (it would take the Secret for
 * gone, and the restored manifest would be left behind).
 */
async function blockManifests(stack: ConformanceStack, clusterId: string): Promise<() => Promise<void>> {
  const dir = join(stack.manifestDir, `clusters-${clusterId}`);
  const aside = `${dir}.aside`;
  await mkdir(stack.manifestDir, { recursive: true });
  await writeFile(`${dir}.block`, 'not a directory');
  await symlink(`${dir}.block`, `${dir}.blocked`);
  // Back to back and synchronous: the adapter runs in this process, and must not recreate the
  // namespace directory in between.
  const moved = existsSync(dir);
  if (moved) renameSync(dir, aside);
  renameSync(`${dir}.blocked`, dir);
  return async () => {
    if (moved) {
      await symlink(aside, `${dir}.swap`);
      await rename(`${dir}.swap`, dir);
    } else await rm(dir, { force: true });
    await rm(`${dir}.block`, { force: true });
  };
}

/** Waits until the adapter has no event in flight (call it only when no other case runs). */
async function idle(stack: ConformanceStack): Promise<void> {
  await stack.waitFor(
    'no event in flight',
    async () => (await stack.adapter()?.metrics.inFlight.get())?.values[0]?.value === 0,
  );
}

function asyncly(undo: () => void): () => Promise<void> {
  return async () => undo();
}

/** Defines the conformance cases for one execution mode. */
export function conformanceSuite(mode: ExecutionMode): void {
  const name = (n: string) => `${mode === 'job' ? 'job' : 'inp'}-${n}`;

  describe(`adapter conformance, ${mode} execution`, () => {
    let stack: ConformanceStack;
    before(async () => (stack = await startConformanceStack(mode)));
    after(async () => stack?.stop());

    describe('each case on its own cluster, all at once', { concurrency: true }, () => {
      it('full lifecycle: create → PATCH → DELETE → hard-delete', async () => {
        const cluster = await stack.createCluster(name('lifecycle'));
        const created = await provisioned(stack, cluster);
        assert.deepEqual(
          ['Applied', 'Available', 'Health'].map((t) => statusOf(created, t)),
          ['True', 'True', 'True'],
        );
        assertExplained(created);
        await reconciled(stack, cluster.id, 1);
        assert.ok(
          (await stack.leftovers(cluster.id)).length >= 2,
          'the Kubernetes Secret and the cloud secret exist',
        );

        const patched = await stack.patchPullSecret(cluster, otherPullSecret(1));
        assert.equal(((await patched.json()) as Cluster).generation, 2);
        await provisioned(stack, cluster, 2);
        await reconciled(stack, cluster.id, 2);

        const deleted = await deleteCluster(stack, cluster.id);
        assert.ok(deleted.deleted_time, 'deleted_time is set');
        assert.equal(deleted.generation, 3);
        await stack.waitHardDeleted(cluster.id);
        assertFinalized(lastReport(stack, cluster.id), 3);
        assert.deepEqual(await stack.leftovers(cluster.id), []);
      });

      it('dependency waiting: Applied=False, Available=Unknown (never False), Health=True until the dependency is done', async () => {
        const cluster = await stack.createCluster(name('waiting'), { labels: { [HOLD_LABEL]: 'dns' } });
        const waiting = await stack.waitForStatus(
          cluster.id,
          (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet',
        );
        assert.equal(conditionOf(waiting, 'Available'), 'Unknown/PreconditionNotMet');
        assert.equal(conditionOf(waiting, 'Health'), 'True/Healthy');
        assertExplained(waiting);
        // The Sentinel keeps sending the cluster; the API discards the repeated Unknown report (204).
        await stack.waitFor('a discarded repeat of the waiting report', () =>
          stack.reportsOf(cluster.id).some((r) => r.result === 'discarded'),
        );
        assert.ok(
          stack.reportsOf(cluster.id).length <= stack.delivered(cluster.id),
          'a discarded report does not make the event retry',
        );

        assert.equal((await stack.request('PATCH', `/clusters/${cluster.id}`, { labels: {} })).status, 200);
        // A change of labels alone bumps the generation, as in hyperfleet-api (docs/testing.md).
        await provisioned(stack, cluster, 2);
        const beforeDone = stack
          .reportsOf(cluster.id)
          .filter((r) => statusOf(r.report, 'Available') !== 'True');
        assert.ok(beforeDone.length >= 2);
        assert.deepEqual(
          [...new Set(beforeDone.map((r) => statusOf(r.report, 'Available')))],
          ['Unknown'],
          'Available is never False while waiting',
        );
      });

      it('adapter failure is reflected: Health=False with details, Reconciled stays False; recovers once fixed', async () => {
        const cluster = await stack.createCluster(name('failure'), { labels: { [HOLD_LABEL]: 'dns' } });
        await stack.waitForStatus(
          cluster.id,
          (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet',
        );
        const unblock =
          stack.kube === undefined
            ? await blockManifests(stack, cluster.id)
            : asyncly(
                stack.kube.injectFault({
                  method: 'GET',
                  resource: 'jobs',
                  name: `pullsecret-${cluster.id}-gen2`,
                  status: 403,
                  times: Infinity,
                }),
              );
        await stack.request('PATCH', `/clusters/${cluster.id}`, { labels: {} });
        const failed = await stack.waitForStatus(cluster.id, (s) => statusOf(s, 'Health') === 'False');
        assert.deepEqual(
          ['Applied', 'Available'].map((t) => statusOf(failed, t)),
          ['False', 'False'],
        );
        assertExplained(failed);
        const health = failed.conditions.find((c) => c.type === 'Health');
        assert.equal(health?.reason, mode === 'job' ? 'KubernetesForbidden' : 'KubernetesFailed');
        assert.match(health?.message ?? '', mode === 'job' ? /HTTP 403/ : /ENOTDIR/);
        assert.notEqual(
          stack.api.getCluster(cluster.id)?.status.conditions.find((c) => c.type === 'Reconciled')?.status,
          'True',
        );
        await unblock();
        const recovered = await provisioned(stack, cluster, 2); // the label PATCH made generation 2
        assert.equal(conditionOf(recovered, 'Health'), 'True/Healthy');
      });

      it('Finalized=False while cleanup cannot be confirmed, then True once it can', async () => {
        const cluster = await stack.createCluster(name('unconfirmed'));
        await provisioned(stack, cluster);
        const unblock =
          stack.kube === undefined
            ? await blockManifests(stack, cluster.id)
            : asyncly(
                stack.kube.injectFault({
                  method: 'DELETE',
                  resource: 'secrets',
                  namespace: `clusters-${cluster.id}`,
                  status: 503,
                  times: Infinity,
                }),
              );
        await deleteCluster(stack, cluster.id);
        const pending = await stack.waitForStatus(cluster.id, (s) => statusOf(s, 'Finalized') === 'False');
        assert.equal(
          conditionOf(pending, 'Finalized'),
          mode === 'job' ? 'False/KubernetesUnavailable' : 'False/KubernetesFailed',
        );
        assertExplained(pending);
        assert.ok(
          stack.api.getCluster(cluster.id)?.deleted_time,
          'not hard-deleted while cleanup is unconfirmed',
        );
        const retried = stack
          .reportsOf(cluster.id)
          .filter((r) => statusOf(r.report, 'Finalized') === 'False').length;
        await stack.waitFor(
          'the deletion event retried',
          () =>
            stack.reportsOf(cluster.id).filter((r) => statusOf(r.report, 'Finalized') === 'False').length >
            retried,
        );
        await unblock();
        await stack.waitHardDeleted(cluster.id);
        assertFinalized(lastReport(stack, cluster.id), 2);
        assert.deepEqual(await stack.leftovers(cluster.id), []);
      });

      it('DELETE during creation switches to cleanup and leaves nothing behind', async () => {
        const cluster = await stack.createCluster(name('delete-creating'), {
          labels: { [HOLD_LABEL]: 'dns' },
        });
        await stack.waitForStatus(
          cluster.id,
          (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet',
        );
        // In-process the work is quick: hold its status report back, so the DELETE lands mid-way.
        const release = stack.api.injectFault({
          route: 'putStatus',
          clusterId: cluster.id,
          delayMs: 300,
          times: Infinity,
        });
        await stack.request('PATCH', `/clusters/${cluster.id}`, { labels: {} }); // generation 2: labels count, as in hyperfleet-api
        if (mode === 'job') await runningJob(stack, cluster.id, 2);
        else
          await stack.waitFor('the Kubernetes Secret written', async () =>
            (await stack.leftovers(cluster.id)).includes('Kubernetes Secret manifest'),
          );
        await deleteCluster(stack, cluster.id);
        await stack.waitHardDeleted(cluster.id);
        release();
        if (mode === 'job') await podsStopped(stack, cluster.id, 2);
        assert.deepEqual(await stack.leftovers(cluster.id), []);
      });

      it('DELETE during an update switches to cleanup and leaves nothing behind', async () => {
        const cluster = await stack.createCluster(name('delete-updating'));
        await provisioned(stack, cluster);
        const release = stack.api.injectFault({
          route: 'putStatus',
          clusterId: cluster.id,
          delayMs: 300,
          times: Infinity,
        });
        await stack.patchPullSecret(cluster, otherPullSecret(2));
        if (mode === 'job') await runningJob(stack, cluster.id, 2);
        else {
          const manifest = join(
            stack.manifestDir,
            `clusters-${cluster.id}`,
            `${cluster.id}-pull-secret.yaml`,
          );
          await stack.waitFor('the Kubernetes Secret updated', async () =>
            /hyperfleet\.io\/secret-version: "2"/.test(await readFile(manifest, 'utf8').catch(() => '')),
          );
        }
        const deleted = await deleteCluster(stack, cluster.id);
        assert.equal(deleted.generation, 3);
        await stack.waitHardDeleted(cluster.id);
        release();
        if (mode === 'job') await podsStopped(stack, cluster.id, 2);
        assert.deepEqual(await stack.leftovers(cluster.id), []);
      });

      it('consecutive PATCHes: the final report is at the latest generation; DELETE removes every generation', async () => {
        const cluster = await stack.createCluster(name('patches'));
        await provisioned(stack, cluster);
        for (const n of [3, 4, 5])
          assert.equal((await stack.patchPullSecret(cluster, otherPullSecret(n))).status, 200);
        const final = await provisioned(stack, cluster, 4);
        assert.equal(final.data?.secretName, `hyperfleet-${cluster.id}-pull-secret`);
        await reconciled(stack, cluster.id, 4);
        const sent = stack.reportsOf(cluster.id).map((r) => r.report.observed_generation);
        const firstLatest = sent.indexOf(4);
        assert.ok(
          sent.slice(firstLatest).every((g) => g === 4),
          `no older generation was reported after generation 4 (${sent.join(',')})`,
        );
        if (stack.kube !== undefined) {
          const jobs = stack.kube
            .listObjects('jobs', JOB_NAMESPACE)
            .filter((j) => j.metadata.labels?.['cluster-id'] === cluster.id);
          assert.ok(
            jobs.length >= 2,
            `Jobs of several generations exist (${jobs.map((j) => j.metadata.name).join(', ')})`,
          );
        }
        await deleteCluster(stack, cluster.id);
        await stack.waitHardDeleted(cluster.id);
        assertFinalized(lastReport(stack, cluster.id), 5);
        assert.deepEqual(
          await stack.leftovers(cluster.id),
          [],
          "every generation's Jobs and data Secrets are gone",
        );
      });

      it('concurrent DELETEs and repeated deletion events are idempotent', async () => {
        const cluster = await stack.createCluster(name('concurrent-delete'));
        await provisioned(stack, cluster);
        const answers = await Promise.all(Array.from({ length: 5 }, () => deleteCluster(stack, cluster.id)));
        assert.deepEqual(
          [...new Set(answers.map((c) => `${c.generation} ${c.deleted_time ?? ''}`))],
          [`2 ${answers[0]?.deleted_time ?? ''}`],
          'deleted_time set once, generation bumped once',
        );
        assert.equal(
          (await stack.request('PATCH', `/clusters/${cluster.id}`, { labels: { late: 'yes' } })).status,
          409,
        );
        await Promise.all(Array.from({ length: 3 }, () => stack.publish(cluster.id, 2)));
        await stack.waitHardDeleted(cluster.id);
        assertFinalized(lastReport(stack, cluster.id), 2);
        assert.equal(
          stack.reportsOf(cluster.id).filter((r) => statusOf(r.report, 'Finalized') === 'False').length,
          0,
        );
        assert.deepEqual(await stack.leftovers(cluster.id), []);
      });

      it('a cluster recreated with the same name after hard-delete starts fresh', async () => {
        const first = await stack.createCluster(name('recreate'));
        await provisioned(stack, first);
        await deleteCluster(stack, first.id);
        await stack.waitHardDeleted(first.id);
        const second = await stack.createCluster(name('recreate'));
        assert.notEqual(second.id, first.id);
        await provisioned(stack, second);
        const firstDone = stack
          .reportsOf(second.id)
          .find((r) => statusOf(r.report, 'Available') === 'True')?.report;
        assert.equal(firstDone?.observed_generation, 1);
        assert.equal(
          conditionOf(firstDone, 'Applied'),
          mode === 'job' ? 'True/JobSucceeded' : 'True/SecretCreated',
          'created afresh, nothing carried over',
        );
        assert.deepEqual(await stack.leftovers(first.id), []);
      });
    });

    it('resources already gone count as deleted: Finalized=True (run alone, so nothing re-creates them)', async () => {
      const cluster = await stack.createCluster(name('gone'));
      await provisioned(stack, cluster);
      await reconciled(stack, cluster.id, 1);
      // Nothing else runs now: once no event is in flight, none can write the objects again.
      await idle(stack);
      await rm(join(stack.manifestDir, `clusters-${cluster.id}`), { recursive: true, force: true });
      stack.kube?.deleteObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`);
      for (const kind of ['jobs', 'secrets']) {
        for (const o of stack.kube
          ?.listObjects(kind, JOB_NAMESPACE)
          .filter((x) => x.metadata.labels?.['cluster-id'] === cluster.id) ?? [])
          stack.kube?.deleteObject(kind, JOB_NAMESPACE, o.metadata.name ?? '');
      }
      const store = new LocalStore({ dir: stack.storeDir });
      await store.deleteSecret(`hyperfleet-${cluster.id}-pull-secret`).finally(() => store.close());
      await deleteCluster(stack, cluster.id);
      await stack.waitHardDeleted(cluster.id);
      const final = lastReport(stack, cluster.id);
      assertFinalized(final, 2);
      assert.match(
        final.conditions.find((c) => c.type === 'Finalized')?.message ?? '',
        /no Kubernetes Secret; no cloud secret/,
      );
    });

    it('no status while the adapter is down; it lands once the adapter is back', async () => {
      await stack.stopAdapter();
      const cluster = await stack.createCluster(name('down-up'));
      // The simulated upstream adapters report on the Sentinel's events: the events went out.
      await stack.waitFor('the Sentinel to send the cluster', () =>
        stack.api.listStatuses(cluster.id).some((s) => s.adapter === 'validation'),
      );
      assert.equal(stack.status(cluster.id), undefined);
      await stack.startAdapter();
      const status = await provisioned(stack, cluster);
      assert.equal(status.observed_generation, 1);
      await reconciled(stack, cluster.id, 1);
    });
  });
}
