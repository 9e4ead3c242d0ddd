import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { instrumented } from '../../src/stores/instrumented-store.js';
import { pushSecret } from '../../src/stores/push.js';
import { HARNESSES, type StoreHarness } from '../support/store-harness.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// One contract, every store: the idempotent push and the primitives it is built on behave the same
// on the local store, on GCP Secret Manager (through the real SDK and the gRPC test server) and on
// Azure Key Vault (through the real SDK and the HTTPS test server).

const CLUSTER = 'cls-contract';
const RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 };
const labels = managedLabels(CLUSTER);
const payload = (s = VALID_PULL_SECRET) => Buffer.from(s);
const changed = () => payload(VALID_PULL_SECRET.replace('test@example.com', 'other@example.com'));

for (const [name, makeHarness] of HARNESSES) {
  describe(`store contract: ${name}`, () => {
    let h: StoreHarness;
    let n = 0;
    const id = () => `hyperfleet-contract-${++n}-pull-secret`;
    const versionIds = async (secretId: string) =>
      (await h.store.describe(secretId))?.versions.map((v) => v.version);
    before(async () => (h = await makeHarness()));
    after(async () => h.dispose());

    test('create, unchanged, update', async () => {
      const secretId = id();
      const first = await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
      assert.equal(first.outcome, 'created');
      // Version ids are the store's own (GCP "1", "2"; Key Vault 32 hex digits): compared, never assumed.
      const v1 = first.version as string;
      assert.deepEqual(await versionIds(secretId), [v1]);
      const again = await pushSecret(
        h.store,
        { secretId, labels, payload: payload(JSON.stringify(JSON.parse(VALID_PULL_SECRET), null, 4)) },
        { retry: RETRY },
      );
      assert.equal(again.outcome, 'unchanged');
      assert.equal(again.version, v1);
      const update = await pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY });
      assert.equal(update.outcome, 'updated');
      const v2 = update.version as string;
      assert.notEqual(v2, v1);
      const description = await h.store.describe(secretId);
      assert.deepEqual(
        description?.versions.map((v) => v.version),
        [v2, v1],
      );
      assert.deepEqual(description?.labels, labels);
      assert.ok((await h.store.accessVersion(secretId, v2)).data.equals(changed()));
    });

    test('concurrent create: both runs succeed on one secret holding the same content', async () => {
      const secretId = id();
      const other = await h.second();
      const results = await Promise.all([
        pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY }),
        pushSecret(other, { secretId, labels, payload: payload() }, { retry: RETRY }),
      ]);
      const description = await h.store.describe(secretId);
      // Both may race past the existence check and each add a version: what matters is that both
      // report success with identical content and the store holds no torn state.
      assert.ok(results.every((r) => ['created', 'unchanged'].includes(r.outcome)));
      assert.ok(
        description !== undefined && description.versions.length >= 1 && description.versions.length <= 2,
      );
      assert.ok((await h.store.accessLatestEnabled(secretId))?.data.equals(payload()));
      const createdSecretOnce = results.filter((r) => r.outcome === 'created').length >= 1;
      assert.ok(createdSecretOnce);
    });

    test('a secret without managed-by=hyperfleet is refused and left untouched', async () => {
      const secretId = id();
      await h.seedForeign(secretId, { owner: 'someone-else' }, 'foreign data');
      await assert.rejects(
        pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY }),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'SECRET_UNMANAGED');
          assert.match(err.message, /not managed by HyperFleet/);
          assert.match(
            err.message,
            /or set SECRET_NAME to another name$/,
            'the job names its variable by default',
          );
          return true;
        },
      );
      const adapterRequest = {
        secretId,
        labels,
        payload: payload(),
        secretNameSetting: 'spec.pullSecret.secretName',
      };
      await assert.rejects(pushSecret(h.store, adapterRequest, { retry: RETRY }), (err: Error) => {
        assert.match(err.message, /or set spec\.pullSecret\.secretName to another name$/);
        assert.doesNotMatch(err.message, /SECRET_NAME/);
        return true;
      });
      const description = await h.store.describe(secretId);
      assert.equal(description?.versions.length, 1);
      assert.deepEqual(description?.labels, { owner: 'someone-else' });
    });

    test('a managed secret of another cluster is refused', async () => {
      const secretId = id();
      await h.seedForeign(secretId, managedLabels('cls-other'), VALID_PULL_SECRET);
      await assert.rejects(pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY }), {
        code: 'SECRET_UNMANAGED',
      });
      assert.equal((await h.store.describe(secretId))?.versions.length, 1);
    });

    test('a secret not ours that already holds exactly our content is a no-op: reported unchanged, left untouched', async () => {
      for (const foreign of [{ owner: 'someone-else' }, managedLabels('cls-other')]) {
        const secretId = id();
        await h.seedForeign(secretId, foreign, VALID_PULL_SECRET);
        const seeded = await versionIds(secretId);
        const same = await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
        assert.deepEqual([same.outcome, same.version], ['unchanged', seeded?.[0]]);
        assert.ok(same.stored?.equals(payload()));
        // The first push that would change it is refused, as before.
        await assert.rejects(
          pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY }),
          { code: 'SECRET_UNMANAGED' },
        );
        const description = await h.store.describe(secretId);
        assert.equal(description?.versions.length, 1);
        assert.deepEqual(description?.labels, foreign);
      }
    });

    test('store calls: a no-op is one access; a first run and an update read metadata only to write', async () => {
      const methods: string[] = [];
      const counted = instrumented(h.store, (method) => methods.push(method));
      const push = async (data: Buffer) => {
        methods.length = 0;
        const before = h.calls?.();
        const result = await pushSecret(counted, { secretId, labels, payload: data }, { retry: RETRY });
        // The test server counts the backend calls: one per contract call on these paths, plus what the store declares.
        const extra = methods.reduce(
          (sum, m) => sum + (h.extraCalls?.[m as keyof NonNullable<StoreHarness['extraCalls']>] ?? 0),
          0,
        );
        if (before !== undefined && h.multiCallMethods !== true)
          assert.equal((h.calls?.() ?? 0) - before, methods.length + extra, methods.join(', '));
        return [result.outcome, ...methods];
      };
      const secretId = id();
      // A new secret is created together with its first version (one contract call).
      assert.deepEqual(await push(payload()), [
        'created',
        'accessLatestEnabled',
        'createSecret',
        'accessVersion',
      ]);
      assert.deepEqual(await push(payload()), ['unchanged', 'accessLatestEnabled']);
      assert.deepEqual(await push(changed()), [
        'updated',
        'accessLatestEnabled',
        'getSecret',
        'addVersion',
        'accessVersion',
      ]);
      assert.deepEqual(await push(changed()), ['unchanged', 'accessLatestEnabled']);
    });

    test('not found: reads say so without throwing, access throws SECRET_NOT_FOUND', async () => {
      const secretId = id();
      assert.equal(await h.store.getSecret(secretId), undefined);
      assert.equal(await h.store.describe(secretId), undefined);
      assert.equal(await h.store.deleteSecret(secretId), false);
      await assert.rejects(h.store.accessLatestEnabled(secretId), { code: 'SECRET_NOT_FOUND' });
      await assert.rejects(h.store.addVersion(secretId, payload()), { code: 'SECRET_NOT_FOUND' });
    });

    test('a secret with no version yet (crash after create) gets its first version', async () => {
      const secretId = id();
      await h.store.createSecret(secretId, labels);
      assert.equal(await h.store.accessLatestEnabled(secretId), undefined);
      const result = await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
      assert.equal(result.outcome, 'created');
      assert.deepEqual(await versionIds(secretId), [result.version]);
    });

    test('disabled latest version: compared against the newest enabled one', async () => {
      const secretId = id();
      const v1 = (await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY }))
        .version as string;
      const v2 = (await pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY }))
        .version as string;
      await h.disableVersion(secretId, v2);
      assert.equal((await h.store.accessLatestEnabled(secretId))?.version, v1);
      await assert.rejects(h.store.accessVersion(secretId, v2), { code: 'VERSION_NOT_ENABLED' });
      const same = await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
      assert.equal(same.outcome, 'unchanged');
      assert.equal(same.version, v1);
      const readd = await pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY });
      assert.equal(readd.outcome, 'updated');
      const v3 = readd.version as string;
      // A new version, or (AWS: the version id derives from content and base) the disabled one holding exactly this content again.
      assert.notEqual(v3, v1);
      assert.ok((await h.store.accessLatestEnabled(secretId))?.data.equals(changed()));
      // No enabled version left: the secret exists, so it gets a new version, not a second create.
      await h.disableVersion(secretId, v3);
      await h.disableVersion(secretId, v1);
      const again = await pushSecret(h.store, { secretId, labels, payload: changed() }, { retry: RETRY });
      assert.equal(again.outcome, 'created');
      assert.ok(![v1, v2, v3].includes(again.version as string), 'a new version');
    });

    test('payload limit and naming rules are enforced by the store itself', async () => {
      const secretId = id();
      await h.store.createSecret(secretId, labels);
      await assert.rejects(
        h.store.addVersion(secretId, Buffer.alloc(65537, 'x')),
        (err: Error & { code?: string }) =>
          ['PAYLOAD_TOO_LARGE', 'STORE_INVALID_REQUEST'].includes(err.code ?? ''),
      );
      await assert.rejects(h.store.createSecret('bad id', labels), (err: Error & { code?: string }) =>
        ['IDENTIFIER_INVALID', 'STORE_INVALID_REQUEST'].includes(err.code ?? ''),
      );
      await assert.rejects(h.store.createSecret(id(), { Bad: 'x' }), (err: Error & { code?: string }) =>
        ['IDENTIFIER_INVALID', 'STORE_INVALID_REQUEST'].includes(err.code ?? ''),
      );
    });

    test('delete removes the secret and all versions', async () => {
      const secretId = id();
      await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
      assert.equal(await h.store.deleteSecret(secretId), true);
      assert.equal(await h.store.getSecret(secretId), undefined);
    });

    test('transient faults on each step end in success without a duplicate version', async (t) => {
      if (h.injectTransient === undefined || h.calls === undefined)
        return t.skip('this store cannot inject faults');
      const secretId = id();
      for (const operation of ['accessLatest', 'createSecret', 'addVersion'] as const)
        h.injectTransient(operation);
      // The add is applied but its answer is lost: the retry must find it instead of adding again.
      h.injectTransient('addVersion', true);
      const result = await pushSecret(h.store, { secretId, labels, payload: payload() }, { retry: RETRY });
      assert.equal(result.outcome, 'created');
      assert.deepEqual(await versionIds(secretId), [result.version]);
    });

    test('a permanent fault fails at once, with no retry', async (t) => {
      if (h.injectPermissionDenied === undefined || h.calls === undefined)
        return t.skip('this store cannot inject faults');
      const before = h.calls();
      h.injectPermissionDenied('accessLatest');
      await assert.rejects(
        pushSecret(h.store, { secretId: id(), labels, payload: payload() }, { retry: RETRY }),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'STORE_PERMISSION_DENIED');
          if (h.accessPermission !== undefined) assert.match(err.message, h.accessPermission);
          return true;
        },
      );
      assert.equal(h.calls() - before, 1);
    });

    test('an aborted call fails with ABORTED', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(h.store.getSecret(id(), { signal: controller.signal }), { code: 'ABORTED' });
    });
  });
}
