import type { HyperFleetClient } from '../hyperfleet/index.js';

/** Page size of the cluster list the fleets read. */
const PAGE = 100;

/**
 * Ids of every cluster not being deleted, page by page: the list the transfer fleet and the entitlement
 * refresher schedule.
 */
export async function listClusterIds(api: HyperFleetClient, signal: AbortSignal): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const list = await api.listClusters({ page, size: PAGE }, { signal });
    for (const c of list.items) if (c.deleted_time === undefined) ids.push(c.id);
    if (list.items.length === 0 || page * PAGE >= list.total) return ids;
  }
}
