import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { PullSecretError } from '../errors/index.js';
import { assertKubernetesName, quoteIdentifier } from '../pullsecret/identifiers.js';
import { syncDirectory, writeFileAtomic } from '../util/atomic-file.js';
import { ParsedFileCache } from '../util/parsed-file-cache.js';
import { classifyManifestFsError } from './errors.js';
import type { PullSecretManifest } from './pull-secret-manifest.js';
import {
  describeSecret,
  isManagedSecret,
  isUpToDate,
  mergeSecret,
  type ExistingSecret,
} from './secret-merge.js';
import type {
  ApplyResult,
  KubernetesSecretTarget,
  RemoveOptions,
  SecretDescription,
  TargetCallOptions,
  TargetLogger,
} from './target.js';

interface ManifestDirectoryOptions {
  /** Root directory; manifests go to `{directory}/{namespace}/{name}.yaml`. */
  directory: string;
  logger?: TargetLogger;
}

/** Fields an API server sets; a manifest meant for `kubectl apply` carries none of them. */
const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
];

type ManifestFile = ExistingSecret & Record<string, unknown>;

function aborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PullSecretError('ABORTED', 'manifest operation aborted');
}

/**
 * The embedded Kubernetes target: writes the Secret as a kubectl-appliable YAML manifest
 * (apiVersion/kind set, no server fields) to `{directory}/{namespace}/{name}.yaml`, mode 0600,
 * atomically (temp file, fsync, rename, fsync directory). Same outcome contract as the API target:
 * `unchanged` leaves the file untouched; an existing file without `managed-by=hyperfleet` is
 * refused (SECRET_UNMANAGED); labels, annotations and data keys others put in the file are kept.
 * Concurrent writers in several processes are not coordinated: the last rename wins.
 */
/** Bound on cached manifests (about 1 KiB each). */
const MAX_CACHED = 50_000;

export class ManifestDirectoryTarget implements KubernetesSecretTarget {
  readonly kind = 'manifest-directory';
  readonly location: string;
  private readonly logger: TargetLogger | undefined;
  /**
   * Parsed manifests, including those this target wrote. A no-op reconcile then costs a `stat`
   * instead of a read and a YAML parse (the largest part of its CPU time); a file replaced or edited
   * by anyone has another inode, size or mtime and is read again.
   */
  private readonly parsed = new ParsedFileCache<ManifestFile>(MAX_CACHED);

  constructor(options: ManifestDirectoryOptions) {
    this.location = options.directory;
    this.logger = options.logger;
  }

  /**
   * Path of a Secret's manifest. Names are validated first, which also keeps paths inside the
   * directory (DNS-1123 names hold no `/` and no `..`).
   * @throws PullSecretError IDENTIFIER_INVALID.
   */
  pathOf(namespace: string, name: string): string {
    assertKubernetesName(namespace, 'Kubernetes namespace', 63);
    assertKubernetesName(name, 'Kubernetes Secret name', 253);
    return join(this.location, namespace, `${name}.yaml`);
  }

  async apply(desired: PullSecretManifest, options: TargetCallOptions = {}): Promise<ApplyResult> {
    const { name, namespace } = desired.metadata;
    const path = this.pathOf(namespace, name);
    aborted(options.signal);
    const existing = await this.read(path);
    if (existing !== undefined && !isManagedSecret(existing)) {
      throw new PullSecretError(
        'SECRET_UNMANAGED',
        `manifest ${quoteIdentifier(path)} exists without label managed-by=hyperfleet; refusing to overwrite it`,
      );
    }
    if (existing !== undefined && isUpToDate(existing, desired))
      return { outcome: 'unchanged', name, namespace };
    const manifest = existing === undefined ? desired : this.merged(existing, desired);
    aborted(options.signal);
    this.parsed.delete(path);
    try {
      await mkdir(join(this.location, namespace), { recursive: true, mode: 0o700 });
      const written = await writeFileAtomic(path, stringify(manifest), { mode: 0o600 });
      // Plain strings and maps: a YAML round trip gives back an equal object, so skip the re-parse.
      this.parsed.set(path, written, structuredClone(manifest) as ManifestFile);
    } catch (err) {
      throw classifyManifestFsError(err, 'write', path);
    }
    const outcome = existing === undefined ? 'created' : 'updated';
    this.logger?.debug({ namespace, name, outcome, path }, 'kubernetes secret manifest written');
    return { outcome, name, namespace };
  }

  async remove(namespace: string, name: string, options: RemoveOptions = {}): Promise<boolean> {
    const path = this.pathOf(namespace, name);
    aborted(options.signal);
    const existing = await this.read(path);
    if (
      existing === undefined ||
      (options.only !== undefined && !options.only(existing.metadata?.labels ?? {}))
    )
      return false;
    if (!isManagedSecret(existing)) {
      throw new PullSecretError(
        'SECRET_UNMANAGED',
        `manifest ${quoteIdentifier(path)} exists without label managed-by=hyperfleet; refusing to delete it`,
      );
    }
    this.parsed.delete(path);
    try {
      await rm(path, { force: true });
      await syncDirectory(join(this.location, namespace));
    } catch (err) {
      throw classifyManifestFsError(err, 'delete', path);
    }
    return true;
  }

  async describe(
    namespace: string,
    name: string,
    options: TargetCallOptions = {},
  ): Promise<SecretDescription | undefined> {
    const path = this.pathOf(namespace, name);
    aborted(options.signal);
    const existing = await this.read(path);
    return existing === undefined ? undefined : describeSecret(existing, name, namespace);
  }

  /** The existing file's object with our keys laid over it, server fields dropped. */
  private merged(existing: ManifestFile, desired: PullSecretManifest): Record<string, unknown> {
    const merged = mergeSecret(existing, desired);
    const metadata: Record<string, unknown> = { ...(existing.metadata ?? {}) };
    for (const field of SERVER_FIELDS) delete metadata[field];
    return {
      ...existing,
      apiVersion: desired.apiVersion,
      kind: desired.kind,
      metadata: {
        ...metadata,
        name: desired.metadata.name,
        namespace: desired.metadata.namespace,
        labels: merged.labels,
        annotations: merged.annotations,
      },
      type: desired.type,
      data: merged.data,
    };
  }

  /**
   * The manifest at `path`, or undefined when there is none.
   * @throws KUBE_FAILED when the file is not a single YAML Secret (it is then left alone).
   */
  private async read(path: string): Promise<ManifestFile | undefined> {
    try {
      return await this.parsed.load(path, (raw) => parseManifest(raw, path));
    } catch (err) {
      throw err instanceof PullSecretError ? err : classifyManifestFsError(err, 'read', path);
    }
  }
}

/** @throws KUBE_FAILED when `raw` is not a single YAML v1 Secret. */
function parseManifest(raw: Buffer, path: string): ManifestFile {
  let parsed: unknown;
  try {
    parsed = parse(raw.toString('utf8'));
  } catch {
    // The parser's message can quote file content, which may be Secret data.
    parsed = undefined;
  }
  const obj = parsed as ManifestFile | undefined;
  if (typeof obj !== 'object' || obj === null || obj.kind !== 'Secret' || obj.apiVersion !== 'v1') {
    throw new PullSecretError(
      'KUBE_FAILED',
      `manifest ${quoteIdentifier(path)} is not a YAML v1 Secret; leaving it untouched`,
    );
  }
  return obj;
}
