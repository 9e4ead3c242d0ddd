import { randomBytes, randomUUID } from 'node:crypto';
import { applyCreateDefaults, applyDefaults } from './defaults.js';
import { parseFieldSelector, parseLabelSelector } from './label-selector.js';
import { applyPatch } from './patch.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  namespaceTerminating,
  notFound,
  success,
  type Target,
} from './status.js';
import type { ObjectStore } from './store.js';
import {
  apiVersionOf,
  clone,
  isRecord,
  RESOURCE_TYPES,
  sameJson,
  type KubeObject,
  type ResourceType,
} from './types.js';
import { validateObject, validateUpdate } from './validate.js';

/** Options of a write: server-side dry run, and whether it targets the `/status` subresource. */
export interface WriteOptions {
  dryRun?: boolean;
  status?: boolean;
}

export interface ListOptions {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continueToken?: string | null;
}

const NAMESPACES = RESOURCE_TYPES.find((r) => r.resource === 'namespaces') as ResourceType;
const JOBS = RESOURCE_TYPES.find((r) => r.resource === 'jobs') as ResourceType;
const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'deletionTimestamp',
  'managedFields',
  'selfLink',
];

/** The Status target naming an object of `rt`. */
export function targetOf(rt: ResourceType, name: string): Target {
  return { resource: rt.resource, group: rt.group, name };
}

/**
 * The API semantics on top of the store: create / replace / patch / delete / list with the real
 * server's checks and error Statuses (404, 409 AlreadyExists, 409 Conflict on a stale
 * resourceVersion, 422 Invalid, 400). Used by the HTTP layer and by the test helpers alike.
 */
export class ApiOperations {
  /** Called when a namespace starts terminating; the namespace controller's part (`finalizeNamespace`) is the server's. */
  onNamespaceTerminating: (name: string) => void = () => undefined;

  constructor(readonly store: ObjectStore) {}

  /** @throws StatusError 404 NotFound. */
  get(rt: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(rt, namespace, name);
    if (obj === undefined) throw notFound(targetOf(rt, name));
    return obj;
  }

  /** A `{Kind}List` with selectors and `limit`/`continue` paging. */
  list(rt: ResourceType, namespace: string | undefined, options: ListOptions = {}): Record<string, unknown> {
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector);
    const after = options.continueToken
      ? Buffer.from(options.continueToken, 'base64url').toString('utf8')
      : '';
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    const { items: page, matched } = this.store.page(
      rt,
      namespace,
      (o) =>
        labels(o.metadata.labels) &&
        fields({
          'metadata.name': o.metadata.name ?? '',
          'metadata.namespace': o.metadata.namespace ?? '',
        }) &&
        (after === '' || `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}` > after),
      limit,
    );
    const metadata: Record<string, unknown> = { resourceVersion: this.store.currentResourceVersion() };
    const last = page[page.length - 1];
    if (matched > page.length && last !== undefined) {
      metadata.continue = Buffer.from(
        `${last.metadata.namespace ?? ''}/${last.metadata.name ?? ''}`,
      ).toString('base64url');
      metadata.remainingItemCount = matched - page.length;
    }
    // List items carry no apiVersion/kind, as the API server serves them.
    const items = page.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    return { kind: `${rt.kind}List`, apiVersion: apiVersionOf(rt), metadata, items };
  }

  /** Shapes a request body into an object of `rt`: type checks, URL namespace, server fields dropped. */
  private normalize(rt: ResourceType, namespace: string | undefined, body: unknown): KubeObject {
    if (!isRecord(body) || (body.metadata !== undefined && !isRecord(body.metadata)))
      throw badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: body must be a JSON object`,
      );
    const obj = clone(body) as KubeObject;
    obj.metadata ??= {};
    const apiVersion = apiVersionOf(rt);
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion)
      throw badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersion})`,
      );
    if (obj.kind !== undefined && obj.kind !== rt.kind)
      throw badRequest(
        `the kind in the data (${String(obj.kind)}) does not match the expected kind (${rt.kind})`,
      );
    obj.apiVersion = apiVersion;
    obj.kind = rt.kind;
    if (rt.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== namespace)
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      obj.metadata.namespace = namespace;
    } else delete obj.metadata.namespace;
    return applyDefaults(obj);
  }

  /**
   * Creates an object. @throws StatusError 404 (namespace missing), 409 AlreadyExists, 422, 400.
   */
  create(
    rt: ResourceType,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    if (isRecord(body) && isRecord(body.metadata) && body.metadata.resourceVersion)
      throw badRequest('resourceVersion should not be set on objects to be created');
    const obj = this.normalize(rt, namespace, body);
    for (const field of SERVER_FIELDS) delete obj.metadata[field];
    if (!obj.metadata.name && obj.metadata.generateName)
      obj.metadata.name = `${obj.metadata.generateName}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (rt.namespaced && namespace !== undefined) {
      const ns = this.store.get(NAMESPACES, undefined, namespace);
      if (ns === undefined) throw notFound(targetOf(NAMESPACES, namespace));
      if (ns.metadata.deletionTimestamp !== undefined)
        throw namespaceTerminating(targetOf(rt, obj.metadata.name ?? ''), namespace);
    }
    const uid = randomUUID();
    const prepared = applyCreateDefaults(obj, uid);
    validateObject(rt, prepared);
    const name = prepared.metadata.name ?? '';
    if (this.store.get(rt, namespace, name) !== undefined) throw alreadyExists(targetOf(rt, name));
    prepared.metadata.uid = uid;
    if (options.dryRun) return prepared;
    return this.store.create(rt, prepared);
  }

  /**
   * Replaces an object (PUT). An empty resourceVersion is an unconditional update.
   * @throws StatusError 404, 409 Conflict (stale resourceVersion or uid), 422, 400.
   */
  replace(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const old = this.get(rt, namespace, name);
    const obj = this.normalize(rt, namespace, body);
    if (obj.metadata.name !== name)
      throw badRequest(
        `the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`,
      );
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion)
      throw conflict(targetOf(rt, name));
    if (obj.metadata.uid !== undefined && obj.metadata.uid !== '' && obj.metadata.uid !== old.metadata.uid) {
      throw conflict(
        targetOf(rt, name),
        `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
      );
    }
    return this.commitUpdate(rt, old, obj, options);
  }

  /**
   * Patches an object by content type (JSON patch, merge patch, strategic merge patch). A
   * resourceVersion in the patched result acts as a precondition.
   * @throws StatusError 404, 409, 415, 422, 400.
   */
  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    contentType: string,
    patch: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const old = this.get(rt, namespace, name);
    const patched = this.normalize(rt, namespace, applyPatch(contentType, old, patch));
    if (patched.metadata.name !== name)
      throw badRequest(
        `the name of the object (${String(patched.metadata.name)}) does not match the name on the URL (${name})`,
      );
    if (patched.metadata.resourceVersion !== old.metadata.resourceVersion && patched.metadata.resourceVersion)
      throw conflict(targetOf(rt, name));
    return this.commitUpdate(rt, old, patched, options);
  }

  /**
   * Server-side apply, approximated: creates the object when absent, else strategic-merges the
   * applied configuration into it. Field ownership (managedFields, conflicts, removal of fields a
   * manager stopped applying) is not modelled.
   * @throws StatusError 400 without a fieldManager, plus what create / patch throw.
   */
  apply(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions & { fieldManager: string | null },
  ): { object: KubeObject; created: boolean } {
    if (!options.fieldManager)
      throw badRequest(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    if (this.store.get(rt, namespace, name) === undefined) {
      const obj = this.normalize(rt, namespace, body);
      if (obj.metadata.name !== name)
        throw badRequest(
          `the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`,
        );
      return { object: this.create(rt, namespace, obj, options), created: true };
    }
    return {
      object: this.patch(rt, namespace, name, 'application/strategic-merge-patch+json', body, options),
      created: false,
    };
  }

  /**
   * Merges `status` into an object's status through the `/status` subresource, as a controller
   * would: a MODIFIED watch event, no generation bump. @throws StatusError 404.
   */
  mergeStatus(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    status: Record<string, unknown>,
  ): KubeObject {
    const obj = this.get(rt, namespace, name);
    const merged = { ...(isRecord(obj.status) ? obj.status : {}), ...status };
    return this.replace(rt, namespace, name, { ...obj, status: merged }, { status: true });
  }

  /** The namespace controller's work on a Terminating namespace: deletes its content, then the namespace. */
  finalizeNamespace(name: string): void {
    const ns = this.store.get(NAMESPACES, undefined, name);
    if (ns?.metadata.deletionTimestamp === undefined) return;
    for (const inner of RESOURCE_TYPES.filter((r) => r.namespaced)) {
      for (const o of this.store.list(inner, name)) this.store.delete(inner, name, o.metadata.name ?? '');
    }
    this.store.delete(NAMESPACES, undefined, name);
  }

  private commitUpdate(
    rt: ResourceType,
    old: KubeObject,
    obj: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    let next = obj;
    if (options.status) next = { ...old, status: obj.status };
    else if (rt.hasStatus) next.status = old.status;
    // Server-owned metadata always comes from the stored object.
    const { uid, creationTimestamp, generation, resourceVersion } = old.metadata;
    next.metadata = { ...next.metadata, uid, creationTimestamp, generation, resourceVersion };
    if (generation === undefined) delete next.metadata.generation;
    validateObject(rt, next);
    validateUpdate(rt, next, old);
    if (rt.tracksGeneration && !sameJson(next.spec, old.spec))
      next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    // A no-op write keeps the resourceVersion and emits no event, as on the real API server.
    if (sameJson(next, old) || options.dryRun) return next;
    return this.store.update(rt, next);
  }

  /**
   * Deletes an object. `preconditions` (uid, resourceVersion) guard against deleting a newer object.
   * A Job with a running pod deleted with `propagationPolicy: Foreground` stays, with a
   * deletionTimestamp and the `foregroundDeletion` finalizer, until its pod has stopped.
   * @throws StatusError 404, 409 Conflict (precondition failed), 400 (bad propagationPolicy).
   */
  delete(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    deleteOptions: unknown,
    options: WriteOptions = {},
  ): Record<string, unknown> {
    const old = this.get(rt, namespace, name);
    const opts = isRecord(deleteOptions) ? deleteOptions : {};
    const policy = opts.propagationPolicy;
    if (
      policy !== undefined &&
      policy !== null &&
      !(typeof policy === 'string' && ['Orphan', 'Background', 'Foreground'].includes(policy))
    ) {
      throw badRequest(
        `propagationPolicy: Unsupported value: ${JSON.stringify(policy) ?? ''}: supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    const pre = isRecord(opts.preconditions) ? opts.preconditions : {};
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw conflict(
        targetOf(rt, name),
        `Precondition failed: UID in precondition: ${JSON.stringify(pre.uid) ?? ''}, UID in object meta: ${old.metadata.uid ?? ''}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        targetOf(rt, name),
        `Precondition failed: ResourceVersion in precondition: ${JSON.stringify(pre.resourceVersion) ?? ''}, ResourceVersion in meta: ${old.metadata.resourceVersion ?? ''}`,
      );
    }
    if (options.dryRun) return old;
    if (
      rt === JOBS &&
      policy === 'Foreground' &&
      isRecord(old.status) &&
      typeof old.status.active === 'number' &&
      old.status.active > 0
    ) {
      // Foreground deletion of a Job with a running pod: the API server keeps the Job, marked, until
      // the garbage collector has removed its pods (the job runner then removes it; see job-runner.ts).
      if (old.metadata.deletionTimestamp !== undefined) return old;
      const finalizers = [
        ...(Array.isArray(old.metadata.finalizers) ? (old.metadata.finalizers as string[]) : []),
        'foregroundDeletion',
      ];
      return this.store.update(rt, {
        ...old,
        metadata: {
          ...old.metadata,
          deletionTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          finalizers,
        },
      });
    }
    if (rt === NAMESPACES) {
      // A namespace is not gone at once: it is Terminating (deletionTimestamp, finalizer `kubernetes`)
      // until the namespace controller has deleted its content (pkg/controller/namespace/deletion).
      if (old.metadata.deletionTimestamp !== undefined) return old;
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const terminating = this.store.update(rt, {
        ...old,
        metadata: { ...old.metadata, deletionTimestamp: now },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Terminating' },
      });
      this.onNamespaceTerminating(name);
      return terminating;
    }
    this.store.delete(rt, namespace, name);
    return success({ name, group: rt.group || undefined, kind: rt.resource, uid: old.metadata.uid });
  }
}
