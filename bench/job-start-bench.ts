/**
 * The image-defaults job rows of `npm run bench` alone, plus the same job writing the Kubernetes Secret
 * through the API (what a Job pod of the adapter's Job mode runs): the no-op pull secret job against
 * the GCP test server (and the Kubernetes API test server), with the Dockerfile's NODE_ENV and
 * NODE_OPTIONS, on the bench's Node.js and on the Node.js 22 of .runtimes when present.
 * `tsx bench/job-start-bench.ts` after a build; BENCH_RUNS (default 20), BENCH_CLI (default the
 * executable, dist/cli/pull-secret.js; dist/cli/main.js to compare), BENCH_NODE_OPTIONS (default the image's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchProcesses } from './job-processes.js';
import { node22 as node22Binary } from './adapter-bench.js';
import { fmt } from './stats.js';
import { startSecretManagerTestServer } from '../test/servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer } from '../test/servers/kubernetes/server.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PULL_SECRET = readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim();
const dir = await mkdtemp(join(tmpdir(), 'ps-jobstart-'));
const server = await startSecretManagerTestServer({ project: 'bench-project' });
const kube = await startKubernetesTestServer({ namespaces: ['clusters-cls-bench'] });
try {
  const imageNodeOptions =
    process.env.BENCH_NODE_OPTIONS ??
    /\bNODE_OPTIONS=(\S+)/.exec(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8'))?.[1];
  const gcp = {
    PATH: process.env.PATH,
    METADATA_SERVER_DETECTION: 'none',
    PULL_SECRET_DATA: PULL_SECRET,
    SECRET_STORE: 'gcp',
    GCP_PROJECT_ID: 'bench-project',
    SECRET_MANAGER_ENDPOINT: server.address,
    SECRET_MANAGER_INSECURE: 'true',
    CLUSTER_ID: 'cls-bench',
    NODE_ENV: 'production',
    NODE_OPTIONS: imageNodeOptions,
  };
  const api = { ...gcp, MANAGEMENT_NAMESPACE: 'clusters-cls-bench', KUBECONFIG: kube.kubeconfigPath };
  const rss = join(dir, 'rss');
  await benchProcesses(['run-job', 'pull-secret'], api, 1, rss); // the first run creates the secrets
  const node22 = node22Binary();
  const nodes: Array<[string, string]> = [
    [process.version, process.execPath],
    ...(node22 !== undefined ? [['v22 (.runtimes)', node22] as [string, string]] : []),
  ];
  for (const [target, env] of [
    ['GCP', gcp],
    ['GCP + Kubernetes API', api],
  ] as const) {
    for (const [label, node] of nodes) {
      const r = await benchProcesses(['run-job', 'pull-secret'], env, RUNS, rss, node);
      console.log(
        `${target}\t${label}\tp50 ${fmt(r.wallMs.p50, 0)}\tp95 ${fmt(r.wallMs.p95, 0)}\tRSS ${fmt(r.peakRssMb)} MB\tfailures ${r.failures}`,
      );
    }
  }
} finally {
  await server.stop();
  await kube.close();
  await rm(dir, { recursive: true, force: true });
}
