import { ADAPTER_NAME } from '../reconcile/status-report.js';
import { createHyperFleetClient, type HyperFleetClient } from '../hyperfleet/client.js';
import type { AdapterStatus, Cluster } from '../hyperfleet/types.js';
import type { RetryPolicy } from '../util/retry.js';
import { toStatusRow, type ClusterStatusRow } from './status-row.js';

interface StatusSource {
  /** Any HyperFleet API: `http://127.0.0.1:8000` or a full `.../api/hyperfleet/v1`. */
  apiUrl: string;
  tokenFile?: string;
  /** PEM CA file for an https API with a private CA. */
  caFile?: string;
  /** Whose status to show (default `pullsecret`). */
  adapter?: string;
  timeoutMs?: number;
  /** Status requests at once (default 8). */
  concurrency?: number;
}

const PAGE = 100;
const RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 1_000 };

/**
 * Reads every cluster (paged) and each one's status from `adapter`, and builds the status rows in the
 * API's order. A cluster removed between the two reads shows without a status.
 *
 * @throws PullSecretError CONFIG_INVALID (bad URL, wrong base path, token file), API_UNAVAILABLE (after
 *   retries), API_UNAUTHENTICATED, API_REQUEST_INVALID (an answer that does not fit the contract)
 */
export async function readStatusRows(source: StatusSource): Promise<ClusterStatusRow[]> {
  const timeoutMs = source.timeoutMs ?? 10_000;
  const client = createHyperFleetClient({
    baseUrl: source.apiUrl,
    tokenFile: source.tokenFile,
    caFile: source.caFile,
    timeoutMs,
    retry: RETRY,
  });
  return await collectStatusRows(client, source);
}

/**
 * `readStatusRows` over a client the caller already has (the admin API's list).
 * @throws like `readStatusRows`
 */
export async function collectStatusRows(
  client: HyperFleetClient,
  source: { adapter?: string; concurrency?: number; signal?: AbortSignal },
): Promise<ClusterStatusRow[]> {
  const call = { signal: source.signal };
  const clusters: Cluster[] = [];
  for (let page = 1; ; page++) {
    const list = await client.listClusters({ page, size: PAGE }, call);
    clusters.push(...list.items);
    if (list.items.length === 0 || page * PAGE >= list.total) break;
  }
  const adapter = source.adapter ?? ADAPTER_NAME;

  const rows: ClusterStatusRow[] = new Array<ClusterStatusRow>(clusters.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < clusters.length) {
      const index = next++;
      const cluster = clusters[index] as Cluster;
      rows[index] = toStatusRow(cluster, await findAdapterStatus(client, cluster.id, adapter, source.signal));
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(source.concurrency ?? 8, clusters.length)) }, worker),
  );
  return rows;
}

/**
 * The status `adapter` reported for one cluster (paged), or undefined when it has none or the cluster
 * does not exist. @throws like `readStatusRows`
 */
export async function findAdapterStatus(
  client: HyperFleetClient,
  id: string,
  adapter: string = ADAPTER_NAME,
  signal?: AbortSignal,
): Promise<AdapterStatus | undefined> {
  for (let page = 1; ; page++) {
    const list = await client.listStatuses(id, { page, size: PAGE }, { signal });
    if (list === undefined) return undefined;
    const found = list.items.find((s) => s.adapter === adapter);
    if (found !== undefined || list.items.length === 0 || page * PAGE >= list.total) return found;
  }
}
