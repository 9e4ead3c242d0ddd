/**
 * The data Secret of a Job-mode launch (`cluster-{id}-pullsecret-data`): the only way the pull
 * secret reaches the Job's pod. Removed when an earlier generation left one, then created owned by
 * the Job; never touched without `managed-by=hyperfleet`.
 */
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { withSignal } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';
import { buildJobDataSecret } from './job-manifest.js';

/** What the data Secret is made of: the cluster generation and its pull secret bytes. */
interface DataSecretRequest {
  clusterId: string;
  generation: number;
  pullSecret: Uint8Array;
}

/** `namespace/name`, quoted for a message. */
export function jobRef(namespace: string, name: string): string {
  return quoteIdentifier(`${namespace}/${name}`);
}

function ownedBy(secret: V1Secret, uid: string): boolean {
  return (secret.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Job' && o.uid === uid);
}

async function readSecret(
  core: CoreV1Api,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<V1Secret | undefined> {
  try {
    return await core.readNamespacedSecret({ namespace, name }, withSignal(signal));
  } catch (err) {
    if (apiFailure(err)?.code === 404) return undefined;
    throw classifyKubeError(err, { verb: 'read', kind: 'Secret', namespace, name });
  }
}

/** Deletes a data Secret an earlier launch left (ours only, with uid and resourceVersion preconditions). */
export async function removeStaleDataSecret(
  core: CoreV1Api,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<void> {
  const stale = await readSecret(core, namespace, name, signal);
  if (stale === undefined) return;
  if (!isManaged(stale.metadata?.labels)) throw unmanagedSecret(namespace, name);
  try {
    const preconditions = { uid: stale.metadata?.uid, resourceVersion: stale.metadata?.resourceVersion };
    await core.deleteNamespacedSecret({ namespace, name, body: { preconditions } }, withSignal(signal));
  } catch (err) {
    if (apiFailure(err)?.code === 404) return;
    throw classifyKubeError(err, { verb: 'delete', kind: 'Secret', namespace, name });
  }
}

/** Makes the data Secret exist and be owned by the Job; `createFirst` skips the read when it was just removed. */
export async function ensureDataSecret(
  core: CoreV1Api,
  request: DataSecretRequest,
  namespace: string,
  owner: { name: string; uid: string },
  createFirst: boolean,
  signal: AbortSignal,
): Promise<void> {
  const desired = buildJobDataSecret({
    clusterId: request.clusterId,
    generation: request.generation,
    namespace,
    pullSecret: request.pullSecret,
    owner,
  });
  const name = desired.metadata?.name ?? '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const current =
      createFirst && attempt === 1 ? undefined : await readSecret(core, namespace, name, signal);
    const verb = current === undefined ? 'create' : 'update';
    if (current !== undefined) {
      if (!isManaged(current.metadata?.labels)) throw unmanagedSecret(namespace, name);
      if (ownedBy(current, owner.uid)) return;
    }
    try {
      if (current === undefined)
        await core.createNamespacedSecret({ namespace, body: desired }, withSignal(signal));
      else
        await core.replaceNamespacedSecret(
          {
            namespace,
            name,
            body: {
              ...desired,
              metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion },
            },
          },
          withSignal(signal),
        );
      return;
    } catch (err) {
      const code = apiFailure(err)?.code;
      if (code !== 409 && code !== 404)
        throw classifyKubeError(err, { verb, kind: 'Secret', namespace, name });
    }
  }
  throw new PullSecretError(
    'KUBE_CONFLICT',
    `Kubernetes Secret ${jobRef(namespace, name)} kept changing ` +
      `while it was written for Job ${quoteIdentifier(owner.name)}`,
  );
}

function unmanagedSecret(namespace: string, name: string): PullSecretError {
  return new PullSecretError(
    'SECRET_UNMANAGED',
    `Kubernetes Secret ${jobRef(namespace, name)} exists without label managed-by=hyperfleet; ` +
      'refusing to modify or delete it',
  );
}
