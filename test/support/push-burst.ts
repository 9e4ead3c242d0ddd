import { PullSecretError } from '../../src/errors/index.js';
import type { StoreProvider } from '../../src/reconcile/store-provider.js';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { pushSecret } from '../../src/stores/push.js';
import type { PushOutcome } from '../../src/stores/store.js';
import type { RetryPolicy } from '../../src/util/retry.js';
import type { SecretManagerTestServer } from '../servers/gcp-secret-manager/index.js';

/**
 * A burst of cluster pushes into one GCP project through `StoreProvider` (the adapter's store path:
 * per-project client and quota buckets), for the pacing test and the quota bench.
 */

/** How many clusters of each kind: their secret holds the content already, holds another, or is missing. */
export interface BurstMix {
  noOp: number;
  changed: number;
  firstRun: number;
}

/** What a burst did: outcomes by kind, and the codes of the pushes that failed. */
export interface BurstResult {
  outcomes: Record<PushOutcome, number>;
  failures: string[];
}

/** The secret id of cluster `i` of a burst. */
export const burstSecretId = (i: number): string => `hyperfleet-cls-burst-${i}-pull-secret`;

/** The order of a mix: no-op clusters first, then changed ones, then new ones. */
function kindOf(mix: BurstMix, i: number): keyof BurstMix {
  return i < mix.noOp ? 'noOp' : i < mix.noOp + mix.changed ? 'changed' : 'firstRun';
}

/** Seeds the server's state (no call counted) so each cluster of `mix` finds what its kind says. */
export function seedBurst(
  server: SecretManagerTestServer,
  project: string,
  mix: BurstMix,
  payload: Buffer,
): void {
  const total = mix.noOp + mix.changed + mix.firstRun;
  for (let i = 0; i < total; i++) {
    const kind = kindOf(mix, i);
    if (kind === 'firstRun') continue;
    const data = kind === 'noOp' ? payload : Buffer.from(payload.toString().replace('}', ',"old":true}'));
    server.state.seedSecret(burstSecretId(i), {
      project,
      labels: managedLabels(`cls-burst-${i}`),
      versions: [{ data }],
    });
  }
}

/**
 * Pushes `payload` for clusters `0..count-1` of `project`, `concurrency` at a time (default: all
 * at once; the adapter works on `execution.concurrency` clusters at once). Never throws: failures
 * are counted.
 */
export async function pushBurst(
  stores: StoreProvider,
  project: string,
  count: number,
  payload: Buffer,
  retry: RetryPolicy,
  concurrency = count,
): Promise<BurstResult> {
  const result: BurstResult = { outcomes: { created: 0, updated: 0, unchanged: 0 }, failures: [] };
  const store = await stores.forTarget({ provider: '*', settings: { projectId: project } });
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      try {
        const pushed = await pushSecret(
          store,
          { secretId: burstSecretId(i), labels: managedLabels(`cls-burst-${i}`), payload },
          { retry },
        );
        result.outcomes[pushed.outcome] += 1;
      } catch (err) {
        result.failures.push(err instanceof PullSecretError ? err.code : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return result;
}
