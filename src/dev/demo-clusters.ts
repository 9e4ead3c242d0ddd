import { PullSecretError } from '../errors/index.js';
import { boundText, parseProblem, describeProblem } from '../hyperfleet/errors.js';
import type { Cluster } from '../hyperfleet/types.js';
import { forEachLimited } from '../util/for-each-limited.js';
import { HOLD_LABEL } from './upstream-adapters.js';

/** A `POST /clusters` body, with what the demo expects to happen to it. */
export interface DemoClusterRequest {
  kind: 'Cluster';
  name: string;
  labels?: Record<string, string>;
  spec: Record<string, unknown>;
  /** One line for the reader: what should happen. */
  expect: string;
}

/**
 * Fake credentials: they only ever reach the local store and manifests. One pull secret for every
 * valid demo cluster keeps the redactor's list short however many clusters a run creates.
 */
const DEMO_PULL_SECRET = JSON.stringify({
  auths: {
    'quay.io': {
      auth: Buffer.from('demo-user:demo-only-7f3k').toString('base64'),
      email: 'demo@example.com',
    },
    'registry.redhat.io': {
      auth: Buffer.from('demo-user:demo-only-7f3k').toString('base64'),
      email: 'demo@example.com',
    },
  },
});

/** `auth` decodes to `nocolon`: no `user:password`, so the adapter refuses it and says why. */
const INVALID_PULL_SECRET = '{"auths":{"quay.io":{"auth":"bm9jb2xvbg=="}}}';

function gcpSpec(project: string, pullSecret: string): Record<string, unknown> {
  return {
    provider: 'gcp',
    gcp: { projectId: project },
    region: 'us-central1',
    pullSecret: { data: pullSecret },
  };
}

/** The name of the `i`-th (from 1) valid demo cluster out of `count`, padded so names sort. */
function validName(i: number, count: number): string {
  return `demo-gcp-${String(i).padStart(String(count).length, '0')}`;
}

/**
 * The demo's clusters: `valid` that get provisioned, one with an invalid pull secret (fails with
 * InvalidPullSecret), and one whose dns adapter is held back (skipped: preconditions not met).
 */
export function demoClusters(valid: number): DemoClusterRequest[] {
  const clusters: DemoClusterRequest[] = Array.from({ length: valid }, (_, i) => ({
    kind: 'Cluster',
    name: validName(i + 1, valid),
    spec: gcpSpec('demo-project', DEMO_PULL_SECRET),
    expect: 'stored and provisioned',
  }));
  clusters.push({
    kind: 'Cluster',
    name: 'demo-invalid-pull-secret',
    spec: gcpSpec('demo-project', INVALID_PULL_SECRET),
    expect: 'refused: its pull secret is invalid',
  });
  clusters.push({
    kind: 'Cluster',
    name: 'demo-waiting-for-dns',
    labels: { [HOLD_LABEL]: 'dns' },
    spec: gcpSpec('demo-project', DEMO_PULL_SECRET),
    expect: 'skipped: its dns adapter has not finished',
  });
  return clusters;
}

/** Valid demo clusters only (the benchmark's), named `{prefix}-{i}`. */
export function validClusterRequests(count: number, prefix = 'bench'): DemoClusterRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    kind: 'Cluster',
    name: `${prefix}-${i + 1}`,
    spec: gcpSpec('demo-project', DEMO_PULL_SECRET),
    expect: 'stored and provisioned',
  }));
}

/**
 * Creates clusters through the API (`POST {apiBase}/clusters`), `concurrency` at a time, calling
 * `onCreated` after each. Returns them in request order.
 * @throws PullSecretError API_REQUEST_INVALID (refused) or API_UNAVAILABLE (unreachable)
 */
export async function createClusters(
  apiBase: string,
  requests: readonly DemoClusterRequest[],
  options: { concurrency?: number; onCreated?: (done: number) => void } = {},
): Promise<Cluster[]> {
  const created: Cluster[] = new Array<Cluster>(requests.length);
  let done = 0;
  await forEachLimited(requests, options.concurrency ?? 8, async (request, index) => {
    const { expect: _expect, ...body } = request;
    let response: Response;
    try {
      response = await fetch(`${apiBase}/clusters`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new PullSecretError(
        'API_UNAVAILABLE',
        `cannot reach the HyperFleet API at ${apiBase} to create a cluster`,
        { cause: err },
      );
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (response.status !== 201) {
      throw new PullSecretError(
        'API_REQUEST_INVALID',
        `the HyperFleet API refused cluster ${boundText(request.name, 64)} (${response.status}): ` +
          `${describeProblem(parseProblem(json))}`,
      );
    }
    created[index] = json as Cluster;
    done += 1;
    options.onCreated?.(done);
  });
  return created;
}
