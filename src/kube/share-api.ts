import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import { makeApiClient } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';
import { SHARE_GROUP, SHARE_PLURAL, SHARE_VERSION, USE_VERB, type ShareStatus } from './share-types.js';

/**
 * The API calls of the share controller, each one request: access reviews, the copies' writes,
 * service account patches, status writes. Failures are PullSecretErrors naming the object, never
 * its data (`classifyKubeError`).
 */

/** A Secret as the client sends and returns it. */
export type SecretObject = V1Secret;

interface ServiceAccountRef {
  name?: string;
}

export class ShareApi {
  private readonly core: CoreV1Api;
  private readonly authz: AuthorizationV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.core = makeApiClient(kubeConfig, CoreV1Api);
    this.authz = makeApiClient(kubeConfig, AuthorizationV1Api);
    this.custom = makeApiClient(kubeConfig, CustomObjectsApi);
  }

  /**
   * Whether service account `sa` of `namespace` may `use` the share: a SubjectAccessReview with the
   * groups the API server gives a service account, in the consumer namespace (so a RoleBinding
   * there can grant it). @throws PullSecretError when the review cannot be made.
   */
  async mayUse(share: string, namespace: string, sa: string): Promise<boolean> {
    try {
      const review = await this.authz.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: `system:serviceaccount:${namespace}:${sa}`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
            resourceAttributes: {
              verb: USE_VERB,
              group: SHARE_GROUP,
              resource: SHARE_PLURAL,
              name: share,
              namespace,
            },
          },
        },
      });
      return review.status?.allowed === true && review.status.denied !== true;
    } catch (err) {
      throw classifyKubeError(err, {
        verb: 'access review',
        kind: 'PullSecretShare',
        namespace,
        name: share,
      });
    }
  }

  /** Creates a copy. @returns undefined when a Secret of that name exists (409). @throws PullSecretError otherwise. */
  async createCopy(body: V1Secret): Promise<V1Secret | undefined> {
    const namespace = body.metadata?.namespace ?? '';
    try {
      return await this.core.createNamespacedSecret({ namespace, body });
    } catch (err) {
      if (apiFailure(err)?.code === 409) return undefined;
      throw classifyKubeError(err, {
        verb: 'create',
        kind: 'Secret',
        namespace,
        name: body.metadata?.name ?? '',
      });
    }
  }

  /**
   * Replaces a copy with its resourceVersion. @returns undefined on 409: it changed meanwhile
   * (another replica, someone else), and the watch brings the new version to compare again.
   */
  async replaceCopy(body: V1Secret): Promise<V1Secret | undefined> {
    const namespace = body.metadata?.namespace ?? '';
    const name = body.metadata?.name ?? '';
    try {
      return await this.core.replaceNamespacedSecret({ namespace, name, body });
    } catch (err) {
      if (apiFailure(err)?.code === 409) return undefined;
      throw classifyKubeError(err, { verb: 'update', kind: 'Secret', namespace, name });
    }
  }

  /** Reads a Secret's metadata owners; undefined when absent. */
  async readOwners(
    namespace: string,
    name: string,
  ): Promise<{ uid: string; ownerUids: string[] } | undefined> {
    try {
      const s = await this.core.readNamespacedSecret({ namespace, name });
      return { uid: s.metadata?.uid ?? '', ownerUids: (s.metadata?.ownerReferences ?? []).map((r) => r.uid) };
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, { verb: 'get', kind: 'Secret', namespace, name });
    }
  }

  /**
   * Deletes a copy, only if it is still the object `uid` (a precondition). False when already gone or replaced (409).
   */
  async deleteCopy(namespace: string, name: string, uid: string): Promise<boolean> {
    try {
      await this.core.deleteNamespacedSecret({ namespace, name, body: { preconditions: { uid } } });
      return true;
    } catch (err) {
      if (apiFailure(err)?.code === 404 || apiFailure(err)?.code === 409) return false;
      throw classifyKubeError(err, { verb: 'delete', kind: 'Secret', namespace, name });
    }
  }

  /**
   * Appends `{name: secretName}` to a service account's imagePullSecrets with a JSON patch that
   * tests the resourceVersion it read, so no other entry is ever replaced or lost.
   * @returns `present` (already there or added) or `missing` (no such service account).
   */
  async addImagePullSecret(
    namespace: string,
    sa: string,
    secretName: string,
  ): Promise<'present' | 'missing'> {
    try {
      const account = await this.core.readNamespacedServiceAccount({ namespace, name: sa });
      const refs: ServiceAccountRef[] = account.imagePullSecrets ?? [];
      if (refs.some((r) => r.name === secretName)) return 'present';
      const test = {
        op: 'test',
        path: '/metadata/resourceVersion',
        value: account.metadata?.resourceVersion,
      };
      const add =
        refs.length > 0 || account.imagePullSecrets !== undefined
          ? { op: 'add', path: '/imagePullSecrets/-', value: { name: secretName } }
          : { op: 'add', path: '/imagePullSecrets', value: [{ name: secretName }] };
      await this.core.patchNamespacedServiceAccount(
        { namespace, name: sa, body: [test, add] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      return 'present';
    } catch (err) {
      if (apiFailure(err)?.code === 404) return 'missing';
      throw classifyKubeError(err, { verb: 'patch', kind: 'ServiceAccount', namespace, name: sa });
    }
  }

  /** Removes `{name: secretName}` from a service account's imagePullSecrets (only that entry, tested by name). */
  async removeImagePullSecret(namespace: string, sa: string, secretName: string): Promise<void> {
    try {
      const account = await this.core.readNamespacedServiceAccount({ namespace, name: sa });
      const index = (account.imagePullSecrets ?? []).findIndex((r) => r.name === secretName);
      if (index < 0) return;
      const ops = [
        { op: 'test', path: `/imagePullSecrets/${index}/name`, value: secretName },
        { op: 'remove', path: `/imagePullSecrets/${index}` },
      ];
      await this.core.patchNamespacedServiceAccount(
        { namespace, name: sa, body: ops },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
    } catch (err) {
      if (apiFailure(err)?.code === 404) return;
      throw classifyKubeError(err, { verb: 'patch', kind: 'ServiceAccount', namespace, name: sa });
    }
  }

  /** Writes a share's status (merge patch of the `/status` subresource). False when the share is gone. */
  async writeStatus(share: string, status: ShareStatus): Promise<boolean> {
    try {
      await this.custom.patchClusterCustomObjectStatus(
        { group: SHARE_GROUP, version: SHARE_VERSION, plural: SHARE_PLURAL, name: share, body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return true;
    } catch (err) {
      if (apiFailure(err)?.code === 404) return false;
      throw classifyKubeError(err, {
        verb: 'status update',
        kind: 'PullSecretShare',
        namespace: '',
        name: share,
      });
    }
  }
}
