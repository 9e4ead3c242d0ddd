import { status } from '@grpc/grpc-js';
import { crc32c } from '../../../src/stores/gcp-secret-manager/crc32c.js';
import { RpcError } from './types.js';

/**
 * Resource names as Secret Manager parses them. A request may name the project by id or by number;
 * both reach the same secret, and every name the service answers with (resources, error messages,
 * notifications) carries the project *number*: a request for `projects/<id>/secrets/s` is answered
 * with `projects/<number>/secrets/s`. Evidence: the live service's recorded traffic,
 * https://github.com/GoogleCloudPlatform/k8s-config-connector/blob/master/pkg/test/resourcefixture/testdata/basic/secretmanager/v1beta1/basicsecretmanagersecret/_http.log
 * Parsed names here are canonical, with the number.
 */

/**
 * The project number of a project id: digits are a number already; an id gets a stable 12-digit
 * number (this server has no Resource Manager to look one up in).
 */
export function projectNumberOf(project: string): string {
  return /^[0-9]+$/.test(project) ? project : String(100_000_000_000 + crc32c(Buffer.from(project)));
}

const PROJECT = /^projects\/([^/]+)$/;
const SECRET = /^projects\/([^/]+)\/secrets\/([^/]+)$/;
const VERSION = /^projects\/([^/]+)\/secrets\/([^/]+)\/versions\/([^/]+)$/;
/** Secret Manager's secret id rule. */
export const SECRET_ID = /^[A-Za-z0-9_-]{1,255}$/;

export interface SecretRef {
  /** The project number. */
  project: string;
  secretId: string;
  /** `projects/{number}/secrets/{secretId}`. */
  name: string;
}

export interface VersionRef extends SecretRef {
  /** A version number, or `latest`. */
  version: number | 'latest';
}

function invalidName(kind: string, value: string): RpcError {
  return new RpcError(
    status.INVALID_ARGUMENT,
    `Invalid resource field value in the request: ${kind} name [${value}] is malformed.`,
  );
}

/** `projects/{project}` → the project. */
export function parseParent(parent: string | undefined): string {
  const match = PROJECT.exec(parent ?? '');
  if (match === null) throw invalidName('parent', parent ?? '');
  return projectNumberOf(match[1] as string);
}

/** Validates a secret id. @throws INVALID_ARGUMENT naming the rule. */
export function assertSecretIdRule(secretId: string): void {
  if (!SECRET_ID.test(secretId)) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `Secret ID [${secretId}] is invalid: it must be 1 to 255 characters long and contain only letters, numbers, hyphens and underscores.`,
    );
  }
}

/** `projects/{p}/secrets/{s}` → parts. */
export function parseSecretName(name: string | undefined): SecretRef {
  const match = SECRET.exec(name ?? '');
  if (match === null) throw invalidName('Secret', name ?? '');
  const [, project, secretId] = match as unknown as [string, string, string];
  assertSecretIdRule(secretId);
  return { project: projectNumberOf(project), secretId, name: secretName(project, secretId) };
}

/** `projects/{p}/secrets/{s}/versions/{n|latest}` → parts. */
export function parseVersionName(name: string | undefined): VersionRef {
  const match = VERSION.exec(name ?? '');
  if (match === null) throw invalidName('SecretVersion', name ?? '');
  const [, project, secretId, version] = match as unknown as [string, string, string, string];
  assertSecretIdRule(secretId);
  if (version !== 'latest' && !/^[1-9][0-9]{0,15}$/.test(version)) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `SecretVersion id [${version}] is invalid: it must be a positive version number or "latest".`,
    );
  }
  const number = projectNumberOf(project);
  return {
    project: number,
    secretId,
    name: secretName(number, secretId),
    version: version === 'latest' ? 'latest' : Number(version),
  };
}

/** The canonical `projects/{number}/secrets/{s}` for a project (id or number) and a secret id. */
export function secretName(project: string, secretId: string): string {
  return `projects/${projectNumberOf(project)}/secrets/${secretId}`;
}

/** The canonical form of a name `projects/{id or number}/secrets/{s}[/...]`; other text as it is. */
export function canonicalName(name: string): string {
  return name.replace(
    /^projects\/([^/]+)\//,
    (_, project: string) => `projects/${projectNumberOf(project)}/`,
  );
}
