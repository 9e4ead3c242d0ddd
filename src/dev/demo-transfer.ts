import { parseStrictJson } from '../pullsecret/strict-json.js';
import { isObject } from '../pullsecret/validate.js';
import { LocalStore } from '../stores/local/index.js';
import type { AccountServiceStandIn } from './account-service/index.js';
import type { DemoClusterRequest } from './demo-clusters.js';

/**
 * The demo's ownership transfer (docs/account-service.md): one cluster whose pull secret has a
 * `cloud.openshift.com` token (so it may ask the account service), a `quay.io` and a
 * `registry.redhat.io` entry; the account-service stand-in then holds an accepted transfer whose
 * pull secret names `quay.io` only. The adapter's transfer check replaces `quay.io` and keeps the
 * others. Fake credentials: they only ever reach the local store and manifests.
 */
export const TRANSFER_CLUSTER_NAME = 'demo-transfer';
export const DEMO_TRANSFER_ID = 'demo-transfer-1';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const CLOUD_TOKEN = b64('demo-cluster:demo-cloud-token-4n8p');
const OLD_OWNER = b64('old-owner:demo-only-2x9q');
const NEW_OWNER = b64('new-owner:demo-only-5w1z');
const CURRENT = JSON.stringify({
  auths: {
    'cloud.openshift.com': { auth: CLOUD_TOKEN, email: 'old-owner@example.com' },
    'quay.io': { auth: OLD_OWNER, email: 'old-owner@example.com' },
    'registry.redhat.io': { auth: OLD_OWNER, email: 'old-owner@example.com' },
  },
});
const TRANSFERRED = JSON.stringify({
  auths: { 'quay.io': { auth: NEW_OWNER, email: 'new-owner@example.com' } },
});

/** The demo's transfer cluster, created with the others. */
export function transferClusterRequest(): DemoClusterRequest {
  return {
    kind: 'Cluster',
    name: TRANSFER_CLUSTER_NAME,
    spec: {
      provider: 'gcp',
      gcp: { projectId: 'demo-project' },
      region: 'us-central1',
      pullSecret: { data: CURRENT },
    },
    expect: "changes owner: its quay.io credential is replaced by the new owner's, the rest kept",
  };
}

/** Opens the accepted transfer for the created cluster in the stand-in (its token, then the transfer). */
export function openDemoTransfer(account: AccountServiceStandIn, clusterId: string): void {
  account.setClusterToken(clusterId, CLOUD_TOKEN);
  account.addTransfer({ id: DEMO_TRANSFER_ID, clusterId, status: 'accepted', secret: TRANSFERRED });
}

/**
 * Reads the cluster's stored pull secret and says, per registry, whether it holds the new owner's
 * credential (`replaced`) or the one it had (`kept`). Names only: never a credential.
 */
export async function describeDemoTransfer(storeDir: string, clusterId: string): Promise<string> {
  const store = new LocalStore({ dir: storeDir });
  try {
    const latest = await store.accessLatestEnabled(`hyperfleet-${clusterId}-pull-secret`);
    if (latest === undefined) return `Ownership transfer (${TRANSFER_CLUSTER_NAME}): nothing stored yet`;
    const parsed = parseStrictJson(latest.data.toString('utf8'));
    const auths =
      parsed.ok && isObject(parsed.value) && isObject(parsed.value.auths) ? parsed.value.auths : {};
    const before = (JSON.parse(CURRENT) as { auths: Record<string, { auth: string }> }).auths;
    const parts = Object.keys(auths)
      .sort()
      .map((registry) => {
        const entry = auths[registry];
        const auth = isObject(entry) ? entry.auth : undefined;
        const state =
          auth === NEW_OWNER
            ? "replaced by the new owner's"
            : auth === before[registry]?.auth
              ? 'kept'
              : 'changed';
        return `${registry} ${state}`;
      });
    return (
      `Ownership transfer ${DEMO_TRANSFER_ID} (${TRANSFER_CLUSTER_NAME}, store version ` +
      `${latest.version}): ${parts.join(', ')}`
    );
  } finally {
    await store.close();
  }
}
