import { status } from '@grpc/grpc-js';
import { RpcError } from './types.js';

/**
 * Resource names as Secret Manager parses them. The project segment may be an id or a number;
 * the server keeps whatever it was given (no id ↔ number mapping).
 */

const PROJECT = /^projects\/([^/]+)$/;
const SECRET = /^projects\/([^/]+)\/secrets\/([^/]+)$/;
const VERSION = /^projects\/([^/]+)\/secrets\/([^/]+)\/versions\/([^/]+)$/;
/** Secret Manager's secret id rule. */
export const SECRET_ID = /^[A-Za-z0-9_-]{1,255}$/;

export interface SecretRef {
  project: string;
  secretId: string;
  /** `projects/{project}/secrets/{secretId}`. */
  name: string;
}

export interface VersionRef extends SecretRef {
  /** A version number, or `latest`. */
  version: number | 'latest';
}

function invalidName(kind: string, value: string): RpcError {
  return new RpcError(status.INVALID_ARGUMENT, `Invalid resource field value in the request: ${kind} name [${value}] is malformed.`);
}

/** `projects/{project}` → the project. */
export function parseParent(parent: string | undefined): string {
  const match = PROJECT.exec(parent ?? '');
  if (match === null) throw invalidName('parent', parent ?? '');
  return match[1] as string;
}

/** Validates a secret id. @throws INVALID_ARGUMENT naming the rule. */
export function assertSecretIdRule(secretId: string): void {
  if (!SECRET_ID.test(secretId)) {
    throw new RpcError(status.INVALID_ARGUMENT, `Secret ID [${secretId}] is invalid: it must be 1 to 255 characters long and contain only letters, numbers, hyphens and underscores.`);
  }
}

/** `projects/{p}/secrets/{s}` → parts. */
export function parseSecretName(name: string | undefined): SecretRef {
  const match = SECRET.exec(name ?? '');
  if (match === null) throw invalidName('Secret', name ?? '');
  const [, project, secretId] = match as unknown as [string, string, string];
  assertSecretIdRule(secretId);
  return { project, secretId, name: `projects/${project}/secrets/${secretId}` };
}

/** `projects/{p}/secrets/{s}/versions/{n|latest}` → parts. */
export function parseVersionName(name: string | undefined): VersionRef {
  const match = VERSION.exec(name ?? '');
  if (match === null) throw invalidName('SecretVersion', name ?? '');
  const [, project, secretId, version] = match as unknown as [string, string, string, string];
  assertSecretIdRule(secretId);
  if (version !== 'latest' && !/^[1-9][0-9]{0,15}$/.test(version)) {
    throw new RpcError(status.INVALID_ARGUMENT, `SecretVersion id [${version}] is invalid: it must be a positive version number or "latest".`);
  }
  return { project, secretId, name: `projects/${project}/secrets/${secretId}`, version: version === 'latest' ? 'latest' : Number(version) };
}

/** `projects/{p}/secrets/{s}` for a project and id. */
export function secretName(project: string, secretId: string): string {
  return `projects/${project}/secrets/${secretId}`;
}
