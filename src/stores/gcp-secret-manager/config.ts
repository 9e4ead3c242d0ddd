import { isIP } from 'node:net';
import { z } from 'zod';
import { isLoopbackHost } from '../../util/loopback.js';
import type { ApiCallHook, EnvSetting } from '../factory.js';
import { versionDestroyTtlSchema } from './destroy-ttl.js';
import { nextRotationTimeSchema, rotationPeriodSchema, rotationProblem, topicsSchema } from './rotation.js';

/**
 * Observes every Secret Manager API call once it finished: the RPC name (`AccessSecretVersion`),
 * the gRPC status code name (`OK`, `NOT_FOUND`, `UNAVAILABLE`, `CANCELLED` when the caller
 * aborted) and its duration. Feeds `pullsecret_store_api_calls_total` and
 * `pullsecret_gcp_api_calls_total{status_code}`; must not throw.
 */
export type { ApiCallHook };

/** Settings of the GCP Secret Manager store. */
export interface GcpStoreConfig {
  /** GCP project that holds the secrets (its id, not its number). */
  projectId: string;
  /** `host:port` of a non-default endpoint (private endpoint, or a local test server). */
  endpoint?: string;
  /** Plaintext gRPC without credentials; only allowed with an `endpoint` on a loopback host. */
  insecure: boolean;
  /** Deadline of each API call, in milliseconds. */
  callTimeoutMs: number;
  /**
   * Guard each version add with an etag-checked write intent on the secret (needs the extra IAM
   * permission `secretmanager.secrets.update`); default false. See docs/workload-identity.md.
   */
  writeIntent?: boolean;
  /**
   * Customer-managed encryption key of new secrets (`projects/P/locations/global/keyRings/R/cryptoKeys/K`):
   * CreateSecret sets it on the automatic replication. Existing secrets keep theirs.
   */
  kmsKeyName?: string;
  /** Rotation period of new secrets in seconds (1 hour to 100 years; needs `topics`). See rotation.ts. */
  rotationPeriod?: number;
  /** First rotation of new secrets (ISO 8601); default now + `rotationPeriod`. Needs `topics`. */
  nextRotationTime?: string;
  /** Pub/Sub topics (`projects/P/topics/T`) Secret Manager notifies of changes to new secrets. */
  topics?: string[];
  /** Delayed destruction of new secrets' versions, in seconds (24 hours to 1000 days). See destroy-ttl.ts. */
  versionDestroyTtl?: number;
  /** Optional observer of API calls, for metrics. Not settable from the environment. */
  onApiCall?: ApiCallHook;
}

/** Default deadline of one Secret Manager call. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** GCP project ids: 6-30 characters, lowercase letters, digits and hyphens, letter first, no trailing hyphen. */
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
/** `host:port`; an IPv6 host is written in brackets, as gRPC expects it. */
const ENDPOINT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):([0-9]{1,5})$/;

/** An endpoint split into the `apiEndpoint` and `port` the SDK client takes. */
interface Endpoint {
  host: string;
  port: number;
}

/** Splits `host:port`; `undefined` when it is not of that form or the port is out of range. */
export function parseEndpoint(value: string): Endpoint | undefined {
  const match = ENDPOINT.exec(value);
  if (match === null) return undefined;
  const host = match[1] as string;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  if (host.startsWith('[') && isIP(host.slice(1, -1)) !== 6) return undefined;
  return { host, port };
}

/** A Cloud KMS key usable with automatic replication (which takes only `global` keys). */
const KMS_KEY_NAME =
  /^projects\/[a-z][a-z0-9-]{4,28}[a-z0-9]\/locations\/global\/keyRings\/[A-Za-z0-9_-]{1,63}\/cryptoKeys\/[A-Za-z0-9_-]{1,63}$/;
const KMS_KEY_RULE =
  'must be a Cloud KMS key name projects/PROJECT/locations/global/keyRings/RING/cryptoKeys/KEY ' +
  '(automatic replication takes a global key)';

const PROJECT_RULE =
  'must be a GCP project id: 6-30 characters of lowercase letters, digits or "-", starting with a letter ' +
  'and not ending with "-"';
const ENDPOINT_RULE =
  'must be host:port, e.g. secretmanager.googleapis.com:443, 127.0.0.1:8085 or [::1]:8085';
const INSECURE_RULE = 'must be "true" or "false"';
const INSECURE_LOOPBACK_RULE =
  'plaintext gRPC is only allowed together with SECRET_MANAGER_ENDPOINT on a loopback host (localhost, ' +
  '127.0.0.0/8 or [::1])';

const callTimeoutMs = z.coerce
  .number({ error: 'must be a whole number of milliseconds between 1 and 600000' })
  .int({ error: 'must be a whole number of milliseconds between 1 and 600000' })
  .min(1, { error: 'must be a whole number of milliseconds between 1 and 600000' })
  .max(600_000, { error: 'must be a whole number of milliseconds between 1 and 600000' })
  .default(DEFAULT_CALL_TIMEOUT_MS);

/** The settings shared by every project: everything but `projectId`. */
const sharedShape = {
  endpoint: z
    .string({ error: ENDPOINT_RULE })
    .refine((value) => parseEndpoint(value) !== undefined, { error: ENDPOINT_RULE })
    .optional(),
  insecure: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], {
      error: INSECURE_RULE,
    })
    .default(false),
  callTimeoutMs,
  writeIntent: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], {
      error: INSECURE_RULE,
    })
    .optional(),
  kmsKeyName: z.string({ error: KMS_KEY_RULE }).regex(KMS_KEY_NAME, { error: KMS_KEY_RULE }).optional(),
  rotationPeriod: rotationPeriodSchema.optional(),
  nextRotationTime: nextRotationTimeSchema.optional(),
  topics: topicsSchema.optional(),
  versionDestroyTtl: versionDestroyTtlSchema.optional(),
  onApiCall: z
    .custom<ApiCallHook>((value) => typeof value === 'function', { error: 'must be a function' })
    .optional(),
};

/** Plaintext gRPC only to a loopback endpoint: checked on both schemas below. */
function insecureOnLoopback(ctx: {
  value: { insecure: boolean; endpoint?: string | undefined };
  issues: z.core.$ZodRawIssue[];
}): void {
  const { insecure, endpoint } = ctx.value;
  if (!insecure) return;
  const parsed = endpoint === undefined ? undefined : parseEndpoint(endpoint);
  if (parsed === undefined || !isLoopbackHost(parsed.host)) {
    ctx.issues.push({ code: 'custom', message: INSECURE_LOOPBACK_RULE, path: ['insecure'], input: insecure });
  }
}

/** Rotation needs topics: checked on both schemas below. */
function rotationWithTopics(ctx: {
  value: {
    rotationPeriod?: number | undefined;
    nextRotationTime?: string | undefined;
    topics?: string[] | undefined;
  };
  issues: z.core.$ZodRawIssue[];
}): void {
  const problem = rotationProblem(ctx.value);
  if (problem !== undefined)
    ctx.issues.push({ code: 'custom', message: problem.message, path: [problem.path], input: undefined });
}

/**
 * Schema of `GcpStoreConfig`. Accepts the environment's strings and the parsed values alike, so a
 * parsed config can be validated again. Messages describe the rule and never echo the value.
 */
export const gcpStoreConfigSchema: z.ZodType<GcpStoreConfig> = z
  .object({
    projectId: z.string({ error: PROJECT_RULE }).regex(PROJECT_ID, { error: PROJECT_RULE }),
    ...sharedShape,
  })
  .strict()
  .check(insecureOnLoopback)
  .check(rotationWithTopics);

/** The adapter's `store.settings` for GCP: the project is not among them (each cluster names it). */
export const gcpSharedSettingsSchema = z
  .object(sharedShape)
  .strict()
  .check(insecureOnLoopback)
  .check(rotationWithTopics);

/** Secret Manager's limit on one version's payload (64 KiB). */
export const GCP_PAYLOAD_LIMIT_BYTES = 65_536;

/** Environment variables of the GCP store. */
export const gcpStoreEnv: Readonly<Record<string, EnvSetting>> = {
  GCP_PROJECT_ID: {
    key: 'projectId',
    help: 'GCP project that holds the pull secrets (required; the project id, not its number).',
  },
  SECRET_MANAGER_ENDPOINT: {
    key: 'endpoint',
    help:
      'host:port of a non-default Secret Manager endpoint (a private endpoint, or a local test ' +
      'server). Default: the public endpoint.',
  },
  SECRET_MANAGER_INSECURE: {
    key: 'insecure',
    help:
      '"true" for plaintext gRPC without Google credentials; only allowed with a ' +
      'SECRET_MANAGER_ENDPOINT on a loopback host (default false).',
  },
  SECRET_MANAGER_WRITE_INTENT: {
    key: 'writeIntent',
    help:
      '"true" to let only one writer at a time add a version to a secret (an etag-checked intent on ' +
      'the secret; needs the IAM permission secretmanager.secrets.update). Default false.',
  },
  GCP_KMS_KEY_NAME: {
    key: 'kmsKeyName',
    help:
      'Customer-managed encryption key of new secrets, ' +
      'projects/P/locations/global/keyRings/R/cryptoKeys/K (optional; the adapter reads it from each ' +
      'cluster, spec.gcp.kmsKeyName).',
  },
  GCP_ROTATION_PERIOD: {
    key: 'rotationPeriod',
    help:
      'Rotation period of new secrets: seconds or a number with m, h or d ("720h"); 1 hour to 100 ' +
      'years; needs GCP_SECRET_TOPICS. Secret Manager then sends SECRET_ROTATE notifications (optional).',
  },
  GCP_NEXT_ROTATION_TIME: {
    key: 'nextRotationTime',
    help:
      'First rotation of new secrets, RFC 3339 (e.g. 2026-12-01T00:00:00Z); default now + ' +
      'GCP_ROTATION_PERIOD; a time less than 5 minutes ahead is replaced by that default (optional).',
  },
  GCP_SECRET_TOPICS: {
    key: 'topics',
    help:
      'Pub/Sub topics of new secrets, projects/P/topics/T separated by commas (up to 10): Secret ' +
      'Manager publishes every change of the secret and its versions there (optional).',
  },
  GCP_VERSION_DESTROY_TTL: {
    key: 'versionDestroyTtl',
    help:
      'Delayed destruction of new secrets\' versions: seconds or a number with m, h or d ("168h", ' +
      '"7d"); 24 hours to 1000 days. A destroyed version stays DISABLED and restorable that long (optional).',
  },
  GCP_CALL_TIMEOUT_MS: {
    key: 'callTimeoutMs',
    help: `Deadline of each Secret Manager call in milliseconds (default ${DEFAULT_CALL_TIMEOUT_MS}).`,
  },
};
