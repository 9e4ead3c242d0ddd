import { pushSecret } from '../src/stores/push.js';
import { managedLabels } from '../src/pullsecret/identifiers.js';
import type { StoreHooks } from '../src/stores/factory.js';
import type { SecretStore } from '../src/stores/store.js';

/** Store methods that write (local) or RPCs that write (GCP). */
const WRITE_CALL = /^(createSecret|addVersion|deleteSecret|CreateSecret|AddSecretVersion|DeleteSecret)$/;

/**
 * Calls and writes of a first run and of a no-op on a fresh secret, counted at the store's edge,
 * as the AWS and Azure sections print them, so the four stores compare.
 */
export async function storeCallRows(
  label: string,
  pullSecret: string,
  create: (hooks: StoreHooks) => Promise<SecretStore>,
): Promise<string[][]> {
  let [calls, writes] = [0, 0];
  const store = await create({
    onApiCall: (method) => ((calls += 1), (writes += WRITE_CALL.test(method) ? 1 : 0)),
  });
  const request = {
    secretId: 'hyperfleet-cls-bench-calls-pull-secret',
    labels: managedLabels('cls-bench-calls'),
    payload: Buffer.from(pullSecret),
  };
  const rows: string[][] = [];
  try {
    for (const [name, target] of [
      ['a first run', ''],
      ['a no-op', '<= 2 calls, 0 writes'],
    ] as const) {
      [calls, writes] = [0, 0];
      await pushSecret(store, request, { retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 } });
      rows.push([`${label}: calls of ${name}`, `${calls} (${writes} writes)`, 'calls', target]);
    }
  } finally {
    await store.close();
  }
  return rows;
}
