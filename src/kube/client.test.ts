import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { PullSecretError } from '../errors/index.js';
import { loadKubeConfig } from './client.js';

function kubeconfig(server: string, context: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: context, cluster: { server } }],
    users: [{ name: context, user: { token: 't' } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
    'current-context': context,
  });
}

describe('loadKubeConfig', () => {
  let dir: string;
  let explicit: string;
  let fromEnv: string;
  let second: string;
  let saDir: string;
  const inCluster = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-client-'));
    explicit = join(dir, 'explicit');
    fromEnv = join(dir, 'env');
    second = join(dir, 'second');
    saDir = join(dir, 'sa');
    await writeFile(explicit, kubeconfig('https://explicit.example:6443', 'explicit'));
    await writeFile(fromEnv, kubeconfig('https://env.example:6443', 'env'));
    await writeFile(second, kubeconfig('https://second.example:6443', 'second'));
    await mkdir(saDir);
    await writeFile(join(saDir, 'token'), 'sa-token');
    await writeFile(join(saDir, 'ca.crt'), '');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('prefers an explicit path over KUBECONFIG and in-cluster', () => {
    const loaded = loadKubeConfig({
      kubeconfigPath: explicit,
      env: { KUBECONFIG: fromEnv, ...inCluster },
      serviceAccountDir: saDir,
    });
    assert.equal(loaded.source, 'explicit');
    assert.equal(loaded.server, 'https://explicit.example:6443');
  });

  it("uses KUBECONFIG next, merging several files with the first one's context", () => {
    const loaded = loadKubeConfig({
      env: { KUBECONFIG: [fromEnv, second].join(delimiter), ...inCluster },
      serviceAccountDir: saDir,
    });
    assert.equal(loaded.source, 'KUBECONFIG');
    assert.equal(loaded.server, 'https://env.example:6443');
    assert.equal(loaded.kubeConfig.getContexts().length, 2);
  });

  it('uses the in-cluster service account next', () => {
    const loaded = loadKubeConfig({ env: inCluster, serviceAccountDir: saDir });
    assert.equal(loaded.source, 'in-cluster');
    assert.equal(loaded.server, 'https://10.0.0.1:443');
    const provider = loaded.kubeConfig.getCurrentUser()?.authProvider as
      { config?: { tokenFile?: string } } | undefined;
    assert.equal(provider?.config?.tokenFile, join(saDir, 'token'));
  });

  it('falls back to ~/.kube/config without in-cluster markers', async () => {
    const home = join(dir, 'home');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(join(home, '.kube', 'config'), kubeconfig('https://home.example:6443', 'home'));
    const loaded = loadKubeConfig({
      env: { HOME: home, KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      serviceAccountDir: saDir,
    });
    assert.equal(loaded.source, 'default');
    assert.equal(loaded.server, 'https://home.example:6443');
  });

  it("refuses at once when nothing is configured, instead of the client's http://localhost:8080", () => {
    assert.throws(
      () => loadKubeConfig({ env: { HOME: join(dir, 'empty-home') }, serviceAccountDir: join(dir, 'no-sa') }),
      (err: unknown) =>
        err instanceof PullSecretError &&
        err.code === 'CONFIG_INVALID' &&
        err.message.includes('KUBECONFIG') &&
        err.message.includes('KUBERNETES_TARGET=manifests'),
    );
  });

  it('reports an unreadable kubeconfig as CONFIG_INVALID', () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfigPath: join(dir, 'missing') }),
      (err: unknown) =>
        err instanceof PullSecretError && err.code === 'CONFIG_INVALID' && err.message.includes('ENOENT'),
    );
  });
});
