import { randomUUID } from 'node:crypto';
import { RECONCILE_EVENT_TYPE } from '../../events/cluster-event.js';
import { API_BASE_PATH } from '../../hyperfleet/base-url.js';
import type { Cluster } from '../../hyperfleet/types.js';

/** The `source` the upstream Sentinel puts on its events. */
export const SENTINEL_SOURCE = 'hyperfleet-sentinel';

/**
 * The body of one `com.redhat.hyperfleet.cluster.reconcile` event: a structured-mode CloudEvents 1.0
 * JSON document with `data: {id, kind, href, generation}`, as the upstream Sentinel sends it. A
 * trigger only: it carries no spec, so nothing secret.
 */
export function reconcileEventBody(
  cluster: Pick<Cluster, 'id' | 'generation' | 'href'>,
  now = new Date(),
): Buffer {
  const event = {
    specversion: '1.0',
    id: randomUUID(),
    source: SENTINEL_SOURCE,
    type: RECONCILE_EVENT_TYPE,
    time: now.toISOString(),
    datacontenttype: 'application/json',
    data: {
      id: cluster.id,
      kind: 'Cluster',
      href: cluster.href ?? `${API_BASE_PATH}/clusters/${encodeURIComponent(cluster.id)}`,
      generation: cluster.generation,
    },
  };
  return Buffer.from(JSON.stringify(event));
}
