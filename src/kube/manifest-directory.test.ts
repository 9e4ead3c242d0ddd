import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Secret } from 'kubernetes-models/v1';
import { parse, stringify } from 'yaml';
import { PullSecretError } from '../errors/index.js';
import { ManifestDirectoryTarget } from './manifest-directory.js';
import { ANNOTATIONS, buildPullSecretManifest, DOCKERCONFIGJSON_KEY } from './pull-secret-manifest.js';

const CLUSTER = 'cls-abc123';
const V1 = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}');
const V2 = Buffer.from('{"auths":{"quay.io":{"auth":"bmV3Om5ldw=="}}}');

function desired(pullSecret: Buffer, now = '2025-01-01T00:00:00.000Z', secretVersion = '1') {
  return buildPullSecretManifest({
    clusterId: CLUSTER,
    pullSecret,
    secretPath: 'local/s',
    secretVersion,
    now: new Date(now),
  });
}

describe('ManifestDirectoryTarget', () => {
  let dir: string;
  let target: ManifestDirectoryTarget;
  let path: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifest-dir-'));
    target = new ManifestDirectoryTarget({ directory: dir });
    path = target.pathOf(`clusters-${CLUSTER}`, `${CLUSTER}-pull-secret`);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('creates a kubectl-appliable manifest with mode 0600', async () => {
    const result = await target.apply(desired(V1));
    assert.deepEqual(result, {
      outcome: 'created',
      name: `${CLUSTER}-pull-secret`,
      namespace: `clusters-${CLUSTER}`,
    });
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const doc = parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    assert.equal(doc.apiVersion, 'v1');
    assert.equal(doc.kind, 'Secret');
    assert.equal((doc.metadata as Record<string, unknown>).resourceVersion, undefined);
    new Secret(doc).validate();
  });

  it('leaves the file untouched when nothing changed', async () => {
    const before = await stat(path);
    const text = await readFile(path, 'utf8');
    const result = await target.apply(desired(V1, '2030-01-01T00:00:00.000Z'));
    assert.equal(result.outcome, 'unchanged');
    const after = await stat(path);
    assert.equal(after.mtimeMs, before.mtimeMs);
    assert.equal(after.ino, before.ino);
    assert.equal(await readFile(path, 'utf8'), text);
  });

  it('updates on change and keeps keys others added', async () => {
    const doc = parse(await readFile(path, 'utf8')) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      data: Record<string, string>;
    };
    doc.metadata.labels.team = 'payments';
    doc.metadata.annotations['example.com/note'] = 'keep me';
    doc.data.extra = Buffer.from('other').toString('base64');
    await writeFile(path, stringify(doc), { mode: 0o600 });

    const result = await target.apply(desired(V2, '2025-02-02T00:00:00.000Z', '2'));
    assert.equal(result.outcome, 'updated');
    const updated = parse(await readFile(path, 'utf8')) as typeof doc;
    assert.equal(updated.metadata.labels.team, 'payments');
    assert.equal(updated.metadata.annotations['example.com/note'], 'keep me');
    assert.equal(updated.data.extra, Buffer.from('other').toString('base64'));
    assert.ok(Buffer.from(updated.data[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(V2));
    assert.equal(updated.metadata.annotations[ANNOTATIONS.secretVersion], '2');
    assert.equal(updated.metadata.annotations[ANNOTATIONS.lastUpdated], '2025-02-02T00:00:00.000Z');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('updates our annotations without touching last-updated when only they changed', async () => {
    const result = await target.apply(desired(V2, '2026-01-01T00:00:00.000Z', '7'));
    assert.equal(result.outcome, 'updated');
    const doc = parse(await readFile(path, 'utf8')) as { metadata: { annotations: Record<string, string> } };
    assert.equal(doc.metadata.annotations[ANNOTATIONS.secretVersion], '7');
    assert.equal(doc.metadata.annotations[ANNOTATIONS.lastUpdated], '2025-02-02T00:00:00.000Z');
  });

  it('leaves no temp files behind', async () => {
    assert.deepEqual(await readdir(join(dir, `clusters-${CLUSTER}`)), [`${CLUSTER}-pull-secret.yaml`]);
  });

  it('describes without data values', async () => {
    const d = await target.describe(`clusters-${CLUSTER}`, `${CLUSTER}-pull-secret`);
    assert.equal(d?.managed, true);
    assert.deepEqual(d?.dataKeys, [DOCKERCONFIGJSON_KEY, 'extra']);
    assert.equal(d?.contentSha256, d?.annotations[ANNOTATIONS.contentSha256]);
    assert.equal(await target.describe('other', 'none'), undefined);
  });

  it('refuses to overwrite or delete an unmanaged manifest', async () => {
    const foreign = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x-pull-secret', namespace: 'clusters-x' },
      type: 'Opaque',
      data: {},
    };
    await mkdir(join(dir, 'clusters-x'), { recursive: true });
    const foreignPath = join(dir, 'clusters-x', 'x-pull-secret.yaml');
    await writeFile(foreignPath, stringify(foreign));
    const isUnmanaged = (err: unknown) =>
      err instanceof PullSecretError && err.code === 'SECRET_UNMANAGED' && err.message.includes('managed-by');
    await assert.rejects(
      target.apply(
        buildPullSecretManifest({ clusterId: 'x', pullSecret: V1, secretPath: 'p', secretVersion: '1' }),
      ),
      isUnmanaged,
    );
    await assert.rejects(target.remove('clusters-x', 'x-pull-secret'), isUnmanaged);
    assert.deepEqual(parse(await readFile(foreignPath, 'utf8')), foreign);
  });

  it('refuses a file that is not a Secret manifest', async () => {
    await mkdir(join(dir, 'clusters-y'), { recursive: true });
    await writeFile(join(dir, 'clusters-y', 'y-pull-secret.yaml'), 'auths: [unbalanced\n');
    await assert.rejects(
      target.apply(
        buildPullSecretManifest({ clusterId: 'y', pullSecret: V1, secretPath: 'p', secretVersion: '1' }),
      ),
      (err: unknown) => err instanceof PullSecretError && err.code === 'KUBE_FAILED',
    );
  });

  it('removes a managed manifest, then reports it gone', async () => {
    assert.equal(await target.remove(`clusters-${CLUSTER}`, `${CLUSTER}-pull-secret`), true);
    assert.equal(await target.remove(`clusters-${CLUSTER}`, `${CLUSTER}-pull-secret`), false);
  });

  it('rejects names that could escape the directory', () => {
    assert.throws(
      () => target.pathOf('..', 'x'),
      (err: unknown) => err instanceof PullSecretError && err.code === 'IDENTIFIER_INVALID',
    );
    assert.throws(
      () => target.pathOf('ns', '../../etc/passwd'),
      (err: unknown) => err instanceof PullSecretError && err.code === 'IDENTIFIER_INVALID',
    );
  });

  it('honours an aborted signal before writing', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      target.apply(desired(V1), { signal: controller.signal }),
      (err: unknown) => err instanceof PullSecretError && err.code === 'ABORTED',
    );
  });
});
