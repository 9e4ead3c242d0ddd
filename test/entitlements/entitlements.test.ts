import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { V1Secret } from '@kubernetes/client-node';
import { createAccountServiceClient, type AccountServiceClient } from '../../src/account-service/client.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import {
  ENTITLEMENT_KEYS,
  ENTITLEMENT_REASONS,
  ENTITLEMENT_SECRET_NAME,
  entitlementSecretId,
  keyStrings,
  refreshEntitlement,
  type EntitlementOutcome,
} from '../../src/entitlements/entitlement.js';
import { EntitlementExpiry, EntitlementMetrics } from '../../src/entitlements/expiry.js';
import { EntitlementRefresher } from '../../src/entitlements/refresher.js';
import { createKubernetesSecretWriter, type KubernetesSecretWriter } from '../../src/kube/secret-writer.js';
import { createLogger } from '../../src/observability/logger.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';

// Entitlement certificates end to end over loopback: the account-service stand-in issues them,
// the local store keeps them, the Kubernetes API test server receives the Secret.

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const FAST = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
/** Interval 240 ms: 5xx backoff 10, 20 ms (two retries), real timers. */
const INTERVAL = 240;

let service: AccountServiceStandIn;
let client: AccountServiceClient;
let kube: KubernetesTestServer;
let writer: KubernetesSecretWriter;
let store: LocalStore;
let dir: string;
let logText = '';
let ids = 0;
const logger = createLogger({
  level: 'debug',
  destination: new Writable({
    write(chunk: Buffer, _enc, done) {
      logText += chunk.toString('utf8');
      done();
    },
  }),
});

/** A fresh cluster: its namespace, its cloud token at the stand-in, and a pull secret carrying it. */
function cluster(): { id: string; ns: string; pullSecret: Buffer; token: string } {
  const id = `ent-${++ids}`;
  const token = b64(`cluster-bot-${id}:cloud-token-${id}-abcdef`);
  kube.createNamespace(`clusters-${id}`);
  service.setClusterToken(id, token);
  const pullSecret = Buffer.from(
    JSON.stringify({
      auths: {
        'cloud.openshift.com': { auth: token, email: 'a@example.com' },
        'quay.io': { auth: b64('q:pw') },
      },
    }),
  );
  return { id, ns: `clusters-${id}`, pullSecret, token };
}

function refresh(id: string, pullSecret: Buffer): Promise<EntitlementOutcome> {
  return refreshEntitlement(id, pullSecret, {
    client,
    store,
    target: writer,
    push: { retry: FAST },
    intervalMs: INTERVAL,
    retries: 2,
  });
}

function secretOf(ns: string): V1Secret {
  const obj = kube.getObject('secrets', ns, ENTITLEMENT_SECRET_NAME);
  assert.ok(obj, `Secret ${ns}/${ENTITLEMENT_SECRET_NAME} should exist`);
  return obj as V1Secret;
}

const decode = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'entitlements-test-'));
  store = new LocalStore({ dir: join(dir, 'store') });
  service = await startAccountServiceStandIn();
  client = createAccountServiceClient({ baseUrl: service.url, timeoutMs: 5000 });
  kube = await startKubernetesTestServer();
  writer = createKubernetesSecretWriter({ kubeconfigPath: kube.kubeconfigPath });
});
after(async () => {
  await service.stop();
  await kube.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  service.clearFaults();
  service.resetCalls();
});

describe('entitlement certificates', () => {
  it('is fetched, stored beside the pull secret and provisioned as etc-pki-entitlement', async () => {
    const c = cluster();
    const outcome = await refresh(c.id, c.pullSecret);
    assert.equal(outcome.kind, 'refreshed', JSON.stringify(outcome));
    if (outcome.kind !== 'refreshed') return;
    assert.equal(outcome.stored, 'created');
    assert.equal(outcome.secret, 'created');
    assert.equal(service.calls.certificates, 1);
    const issued = service.issuedCertificate(c.id);
    assert.ok(issued);
    assert.equal(outcome.expiresAt, new Date(new X509Certificate(issued.cert).validTo).toISOString());

    const described = await store.describe(entitlementSecretId(c.id));
    assert.ok(described);
    assert.equal(described.labels['resource-type'], 'entitlement');
    assert.equal(described.labels['managed-by'], 'hyperfleet');
    assert.equal(described.labels['cluster-id'], c.id);
    assert.equal(described.versions.length, 1);
    const payload = JSON.parse(
      (await store.accessLatestEnabled(entitlementSecretId(c.id)))?.data.toString('utf8') ?? '',
    ) as { cert: string; key: string };
    assert.deepEqual(payload, { cert: issued.cert, key: issued.key });

    const secret = secretOf(c.ns);
    assert.equal(secret.type, 'Opaque');
    assert.equal(secret.metadata?.labels?.['managed-by'], 'hyperfleet');
    assert.equal(secret.metadata?.labels?.['resource-type'], 'entitlement');
    assert.equal(decode(secret.data?.[ENTITLEMENT_KEYS.cert]), issued.cert);
    assert.equal(decode(secret.data?.[ENTITLEMENT_KEYS.key]), issued.key);
  });

  it('a refresh of the same certificate writes nothing; a rotated one makes one new version and updates the Secret', async () => {
    const c = cluster();
    await refresh(c.id, c.pullSecret);
    const rv = secretOf(c.ns).metadata?.resourceVersion;
    kube.resetCalls();
    const again = await refresh(c.id, c.pullSecret);
    assert.equal(again.kind, 'refreshed');
    if (again.kind !== 'refreshed') return;
    assert.equal(again.stored, 'unchanged');
    assert.equal(again.secret, 'unchanged');
    assert.equal(kube.writes('secrets'), 0);
    assert.equal((await store.describe(entitlementSecretId(c.id)))?.versions.length, 1);
    assert.equal(secretOf(c.ns).metadata?.resourceVersion, rv);

    service.rotateCertificate(c.id);
    const rotated = await refresh(c.id, c.pullSecret);
    assert.equal(rotated.kind, 'refreshed');
    if (rotated.kind !== 'refreshed') return;
    assert.equal(rotated.stored, 'updated');
    assert.equal(rotated.secret, 'updated');
    assert.equal((await store.describe(entitlementSecretId(c.id)))?.versions.length, 2);
    assert.equal(decode(secretOf(c.ns).data?.[ENTITLEMENT_KEYS.cert]), service.issuedCertificate(c.id)?.cert);
  });

  it('reuses the account-service outcomes: no token, 403, 5xx after the backoff, an unexpected answer', async () => {
    const c = cluster();
    const noToken = await refresh(
      c.id,
      Buffer.from(JSON.stringify({ auths: { 'quay.io': { auth: b64('q:pw') } } })),
    );
    assert.equal(noToken.kind, 'no-token');
    assert.equal(ENTITLEMENT_REASONS['no-token'].reason, 'TransferTokenMissing');

    const wrong = Buffer.from(
      JSON.stringify({ auths: { 'cloud.openshift.com': { auth: b64('someone:else-token') } } }),
    );
    const refused = await refresh(c.id, wrong);
    assert.equal(refused.kind, 'refused');
    assert.equal(ENTITLEMENT_REASONS.refused.reason, 'AccountServiceRefused');
    if (refused.kind === 'refused') assert.match(refused.message, /answered 403/);

    service.resetCalls();
    service.injectFault({ route: 'certificates', status: 503, times: Infinity });
    const down = await refresh(c.id, c.pullSecret);
    assert.equal(down.kind, 'unreachable');
    if (down.kind === 'unreachable') assert.equal(down.attempts, 3);
    assert.equal(service.calls.certificates, 3);
    service.clearFaults();

    service.injectFault({ route: 'certificates', body: '<html>proxy</html>' });
    const odd = await refresh(c.id, c.pullSecret);
    assert.equal(odd.kind, 'unexpected');
    assert.equal(await store.describe(entitlementSecretId(c.id)), undefined, 'nothing stored on a failure');
    assert.equal(kube.getObject('secrets', c.ns, ENTITLEMENT_SECRET_NAME), undefined);
  });

  it('the refresher records expiry for status and metrics (a certificate within 7 days is counted)', async () => {
    const registry = new Registry();
    const expiry = new EntitlementExpiry();
    new EntitlementMetrics(registry, expiry);
    const pullSecrets = new Map<string, Buffer>();
    const refresher = new EntitlementRefresher({
      intervalMs: 3_600_000,
      jitter: 0,
      requestsPerSecond: 100,
      maxInFlight: 2,
      expiry,
      metrics: undefined,
      logger,
      refresh: async (id) => {
        const ps = pullSecrets.get(id);
        return ps === undefined ? 'gone' : refresh(id, ps);
      },
    });
    const soon = cluster();
    const later = cluster();
    pullSecrets.set(soon.id, soon.pullSecret);
    pullSecrets.set(later.id, later.pullSecret);
    service.rotateCertificate(soon.id, 3);
    try {
      const a = await refresher.pullSecretChanged(soon.id);
      const b = await refresher.pullSecretChanged(later.id);
      assert.ok(typeof a === 'object' && a.kind === 'refreshed');
      assert.ok(typeof b === 'object' && b.kind === 'refreshed');
      assert.equal(expiry.expiresAt(soon.id), a.expiresAt);
      const text = await registry.metrics();
      assert.match(text, /^pullsecret_entitlement_expiring_clusters 1$/m);
      const min = Number(/^pullsecret_entitlement_expiry_min_seconds (\S+)$/m.exec(text)?.[1]);
      assert.ok(min > 2 * 86_400 && min <= 3 * 86_400, `min seconds ${min}`);
      assert.doesNotMatch(text, new RegExp(soon.id), 'no per-cluster label');
    } finally {
      await refresher.stop();
    }
  });

  it('leak canary: the certificate key never reaches logs, metrics, messages or status data', async () => {
    const registry = new Registry();
    const expiry = new EntitlementExpiry();
    const metrics = new EntitlementMetrics(registry, expiry);
    const c = cluster();
    const outcomes: unknown[] = [];
    const refresher = new EntitlementRefresher({
      intervalMs: 3_600_000,
      jitter: 0,
      requestsPerSecond: 100,
      maxInFlight: 2,
      expiry,
      metrics,
      logger,
      refresh: async (id) => refresh(id, c.pullSecret),
    });
    try {
      outcomes.push(await refresher.pullSecretChanged(c.id));
      service.injectFault({
        route: 'certificates',
        body: JSON.stringify({ cert: 'not a pem', key: service.issuedCertificate(c.id)?.key }),
        contentType: 'application/json',
      });
      outcomes.push(await refresher.pullSecretChanged(c.id));
    } finally {
      await refresher.stop();
    }
    const key = service.issuedCertificate(c.id)?.key;
    assert.ok(key);
    const status = { data: { entitlementExpiresAt: expiry.expiresAt(c.id) } };
    const haystack = [
      logText,
      await registry.metrics(),
      JSON.stringify(outcomes, (_k, v: unknown) => (v instanceof Error ? v.message : v)),
      JSON.stringify(status),
    ].join('\n');
    assert.match(haystack, /AccountServiceUnexpectedAnswer|cert holds no PEM/, 'the failure was reported');
    for (const needle of keyStrings(key)) assert.ok(!haystack.includes(needle), 'a key line leaked');
    assert.ok(!haystack.includes(c.token), 'the cloud token leaked');
  });

  it('the refresher schedules known clusters on the fleet machinery (phase, pacing) and counts by result', async () => {
    const registry = new Registry();
    const expiry = new EntitlementExpiry();
    const metrics = new EntitlementMetrics(registry, expiry);
    const c = cluster();
    const refresher = new EntitlementRefresher({
      intervalMs: 3_600_000,
      jitter: 0,
      requestsPerSecond: 100,
      maxInFlight: 1,
      expiry,
      metrics,
      logger,
      refresh: (id) => refresh(id, c.pullSecret),
    });
    try {
      refresher.start();
      refresher.seen(c.id);
      for (let i = 0; i < 500 && expiry.expiresAt(c.id) === undefined; i++)
        await new Promise((r) => setTimeout(r, 10));
      assert.ok(expiry.expiresAt(c.id), 'the scheduled refresh ran');
      assert.match(
        await registry.metrics(),
        /^pullsecret_entitlement_refreshes_total\{result="refreshed"\} 1$/m,
      );
      refresher.forget(c.id);
      assert.equal(expiry.expiresAt(c.id), undefined);
    } finally {
      await refresher.stop();
    }
  });

  it('the client refuses an invalid architecture and answers without PEM blocks', async () => {
    const c = cluster();
    await assert.rejects(
      client.certificate(c.id, c.token, 'x86 64'),
      (err: Error & { code?: string }) => err.code === 'CONFIG_INVALID',
    );
    service.injectFault({
      route: 'certificates',
      body: JSON.stringify({ cert: 'x', key: 'y' }),
      contentType: 'application/json',
    });
    await assert.rejects(client.certificate(c.id, c.token, 'aarch64'), /cert holds no PEM certificate block/);
    const issued = await client.certificate(c.id, c.token, 'aarch64');
    service.injectFault({
      route: 'certificates',
      body: JSON.stringify({ cert: issued.cert, key: 'no key here' }),
      contentType: 'application/json',
    });
    await assert.rejects(client.certificate(c.id, c.token, 'aarch64'), /key holds no PEM private key block/);
  });
});
