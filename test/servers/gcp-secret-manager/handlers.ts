import { status } from '@grpc/grpc-js';
import { paginate } from './paging.js';
import { parseParent, parseSecretName, parseVersionName, assertSecretIdRule, secretName } from './names.js';
import { assertReplicationRule, checkDestroyTtlRule, checkPayload, checkRotationRule } from './rules.js';
import type { SecretManagerState, StoredSecret } from './state.js';
import { RpcError, type MethodName, type VersionState, type WirePayload, type WireSecret } from './types.js';
import { toWireSecret, toWireVersion } from './wire.js';

/**
 * What each RPC does to the state, given the decoded request. Handlers are synchronous and throw
 * `RpcError`; counting, faults and permissions are the server's business.
 */

/** A decoded request: camelCase fields, absent fields undefined. */
type Request = Record<string, unknown>;

export interface MethodSpec {
  /** The IAM permission the call needs; `undefined` when none (TestIamPermissions). */
  permission: string | undefined;
  /** The resource the permission is checked on, for the PERMISSION_DENIED message. */
  resource(request: Request): string;
  run(request: Request): unknown;
}

export interface HandlerSettings {
  /** Page size when a list request asks for 0 ("server decides"). */
  defaultPageSize: number;
  /** Largest page the server returns, whatever the request asks for. */
  maxPageSize: number;
  /** Permissions TestIamPermissions grants; `undefined` = every permission asked for. */
  grantedPermissions(): ReadonlySet<string> | undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** `state:ENABLED` (or `state=ENABLED`) and the empty filter: what the store sends. */
function parseVersionFilter(filter: string | undefined): VersionState | undefined {
  const text = (filter ?? '').trim();
  if (text === '') return undefined;
  const match = /^state\s*[:=]\s*(ENABLED|DISABLED|DESTROYED)$/i.exec(text);
  if (match === null) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `Invalid filter [${text}]: the test server understands state:ENABLED|DISABLED|DESTROYED.`,
    );
  }
  return (match[1] as string).toUpperCase() as VersionState;
}

/** `labels.KEY=VALUE`, `labels.KEY:VALUE` or `labels.KEY:*`, ANDed by spaces; the empty filter. */
function secretFilter(filter: string | undefined): (secret: StoredSecret) => boolean {
  const terms = (filter ?? '')
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '' && t.toUpperCase() !== 'AND');
  const checks = terms.map((term) => {
    const match = /^labels\.([a-z][a-z0-9_-]*)([:=])(.*)$/.exec(term);
    if (match === null)
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Invalid filter [${term}]: the test server understands labels.KEY=VALUE and labels.KEY:*.`,
      );
    const [, key, , value] = match as unknown as [string, string, string, string];
    return (s: StoredSecret) => (value === '*' ? key in s.labels : s.labels[key] === value);
  });
  return (secret) => checks.every((check) => check(secret));
}

function labelsOf(secret: WireSecret | undefined): Record<string, string> {
  return { ...(secret?.labels ?? {}) };
}

/** The RPC table. */
export function buildMethods(
  state: SecretManagerState,
  settings: HandlerSettings,
): Record<MethodName, MethodSpec> {
  const versionChange = (permission: string, target: VersionState): MethodSpec => ({
    permission,
    resource: (r) => str(r.name) ?? '',
    run: (r) => {
      const ref = parseVersionName(str(r.name));
      const version = state.setVersionState(ref, target, str(r.etag));
      return toWireVersion(state.getSecret(ref), version);
    },
  });

  return {
    ListSecrets: {
      permission: 'secretmanager.secrets.list',
      resource: (r) => str(r.parent) ?? '',
      run: (r) => {
        const project = parseParent(str(r.parent));
        const matching = state.listSecrets(project).filter(secretFilter(str(r.filter)));
        const page = paginate(
          matching,
          {
            pageSize: num(r.pageSize),
            pageToken: str(r.pageToken),
            key: `${project}|${str(r.filter) ?? ''}`,
          },
          settings,
        );
        return {
          secrets: page.items.map(toWireSecret),
          nextPageToken: page.nextPageToken,
          totalSize: page.totalSize,
        };
      },
    },
    CreateSecret: {
      permission: 'secretmanager.secrets.create',
      resource: (r) => str(r.parent) ?? '',
      run: (r) => {
        const project = parseParent(str(r.parent));
        const secretId = str(r.secretId) ?? '';
        assertSecretIdRule(secretId);
        const secret = r.secret as WireSecret | undefined;
        assertReplicationRule(secret?.replication);
        const destroyTtl = checkDestroyTtlRule(secret);
        const notify = {
          ...checkRotationRule(secret),
          ...(destroyTtl === undefined ? {} : { versionDestroyTtlSeconds: destroyTtl }),
        };
        const ref = { project, secretId, name: secretName(project, secretId) };
        const cmek = secret?.replication?.automatic?.customerManagedEncryption;
        const automatic = cmek ? { customerManagedEncryption: { kmsKeyName: cmek.kmsKeyName } } : {};
        const replication =
          secret?.replication?.automatic !== undefined
            ? { automatic }
            : { userManaged: secret?.replication?.userManaged ?? {} };
        return toWireSecret(
          state.createSecret(ref, labelsOf(secret), replication, secret?.annotations ?? {}, notify),
        );
      },
    },
    GetSecret: {
      permission: 'secretmanager.secrets.get',
      resource: (r) => str(r.name) ?? '',
      run: (r) => toWireSecret(state.getSecret(parseSecretName(str(r.name)))),
    },
    UpdateSecret: {
      permission: 'secretmanager.secrets.update',
      resource: (r) => str((r.secret as WireSecret | undefined)?.name) ?? '',
      run: (r) => {
        const secret = r.secret as WireSecret | undefined;
        const ref = parseSecretName(secret?.name);
        const paths = (r.updateMask as { paths?: string[] } | undefined)?.paths ?? [];
        if (paths.length === 0)
          throw new RpcError(
            status.INVALID_ARGUMENT,
            'update_mask is required and must name at least one field.',
          );
        const unsupported = paths.filter((p) => p !== 'labels' && p !== 'annotations');
        if (unsupported.length > 0) {
          throw new RpcError(
            status.INVALID_ARGUMENT,
            `update_mask names fields that cannot be updated here: ${unsupported.join(', ')}.`,
          );
        }
        const changes = {
          ...(paths.includes('labels') ? { labels: labelsOf(secret) } : {}),
          ...(paths.includes('annotations') ? { annotations: { ...(secret?.annotations ?? {}) } } : {}),
        };
        return toWireSecret(state.updateSecret(ref, changes, secret?.etag));
      },
    },
    DeleteSecret: {
      permission: 'secretmanager.secrets.delete',
      resource: (r) => str(r.name) ?? '',
      run: (r) => {
        state.deleteSecret(parseSecretName(str(r.name)), str(r.etag));
        return {};
      },
    },
    AddSecretVersion: {
      permission: 'secretmanager.versions.add',
      resource: (r) => str(r.parent) ?? '',
      run: (r) => {
        const ref = parseSecretName(str(r.parent));
        const { data, clientChecksum } = checkPayload(r.payload as WirePayload | undefined);
        const version = state.addVersion(ref, data, clientChecksum);
        return toWireVersion(state.getSecret(ref), version);
      },
    },
    GetSecretVersion: {
      permission: 'secretmanager.versions.get',
      resource: (r) => str(r.name) ?? '',
      run: (r) => {
        const { secret, version } = state.getVersion(parseVersionName(str(r.name)));
        return toWireVersion(secret, version);
      },
    },
    AccessSecretVersion: {
      permission: 'secretmanager.versions.access',
      resource: (r) => str(r.name) ?? '',
      run: (r) => {
        const { secret, version, data } = state.accessVersion(parseVersionName(str(r.name)));
        return {
          name: `${secret.name}/versions/${version.number}`,
          payload: { data, dataCrc32c: String(version.crc32c) },
        };
      },
    },
    ListSecretVersions: {
      permission: 'secretmanager.versions.list',
      resource: (r) => str(r.parent) ?? '',
      run: (r) => {
        const ref = parseSecretName(str(r.parent));
        const filter = parseVersionFilter(str(r.filter));
        const secret = state.getSecret(ref);
        const versions = state.listVersions(ref, filter);
        const page = paginate(
          versions,
          { pageSize: num(r.pageSize), pageToken: str(r.pageToken), key: `${ref.name}|${filter ?? ''}` },
          settings,
        );
        return {
          versions: page.items.map((v) => toWireVersion(secret, v)),
          nextPageToken: page.nextPageToken,
          totalSize: page.totalSize,
        };
      },
    },
    EnableSecretVersion: versionChange('secretmanager.versions.enable', 'ENABLED'),
    DisableSecretVersion: versionChange('secretmanager.versions.disable', 'DISABLED'),
    DestroySecretVersion: versionChange('secretmanager.versions.destroy', 'DESTROYED'),
    TestIamPermissions: {
      permission: undefined,
      resource: (r) => str(r.resource) ?? '',
      run: (r) => {
        parseSecretName(str(r.resource));
        const asked = Array.isArray(r.permissions)
          ? r.permissions.filter((p): p is string => typeof p === 'string')
          : [];
        const granted = settings.grantedPermissions();
        return { permissions: granted === undefined ? asked : asked.filter((p) => granted.has(p)) };
      },
    },
  };
}
