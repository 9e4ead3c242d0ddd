import type { MethodName } from './types.js';

/**
 * Secret Manager's per-project request quotas ("Quotas and limits": 90,000 access, 600 read and 600
 * write requests per minute per project), counted over a sliding window. An access request is a call
 * of AccessSecretVersion; a write is any mutating call (create, update, delete a secret; add,
 * enable, disable, destroy a version); a read is any other call (Get and List of secrets and
 * versions, and here TestIamPermissions). A refused call does not use up quota.
 */

export const QUOTA_NAMES = ['reads', 'writes', 'accesses'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/** The service's figures per minute per project. */
export const SECRET_MANAGER_QUOTAS: Readonly<Record<QuotaName, number>> = {
  reads: 600,
  writes: 600,
  accesses: 90_000,
};

/** Which quota each RPC counts against. */
export const QUOTA_OF: Readonly<Record<MethodName, QuotaName>> = {
  AccessSecretVersion: 'accesses',
  CreateSecret: 'writes',
  UpdateSecret: 'writes',
  DeleteSecret: 'writes',
  AddSecretVersion: 'writes',
  EnableSecretVersion: 'writes',
  DisableSecretVersion: 'writes',
  DestroySecretVersion: 'writes',
  GetSecret: 'reads',
  ListSecrets: 'reads',
  GetSecretVersion: 'reads',
  ListSecretVersions: 'reads',
  TestIamPermissions: 'reads',
};

/** How the service names each quota: in its message, and its metric and limit in the ErrorInfo. */
const NAMES: Readonly<Record<QuotaName, { title: string; metric: string; limit: string }>> = {
  reads: {
    title: 'Read requests',
    metric: 'secretmanager.googleapis.com/read_requests',
    limit: 'ReadRequestsPerMinutePerProject',
  },
  writes: {
    title: 'Write requests',
    metric: 'secretmanager.googleapis.com/write_requests',
    limit: 'WriteRequestsPerMinutePerProject',
  },
  accesses: {
    title: 'Access requests',
    metric: 'secretmanager.googleapis.com/access_requests',
    limit: 'AccessRequestsPerMinutePerProject',
  },
};

/** Options of the quotas; quotas are off unless the server is given them. */
export interface QuotaSettings {
  /** Length of the sliding window in ms; default 60 000 (the service's minute). Tests shrink it. */
  windowMs?: number;
  /** Calls allowed per window and project, by quota; default the service's figures. */
  limits?: Partial<Record<QuotaName, number>>;
}

/** Why a call was refused: what the server answers with RESOURCE_EXHAUSTED. */
export interface QuotaRefusal {
  quota: QuotaName;
  project: string;
  /** The service's message, e.g. "Quota exceeded for quota metric 'Read requests' and limit ...". */
  message: string;
  /** `quota_metric`, `quota_limit`, `quota_limit_value`, `service`, `consumer` as in the service's ErrorInfo. */
  metadata: Record<string, string>;
}

/** Admission times of one project's calls of one quota, oldest first (a queue without shifting). */
class Window {
  private times: number[] = [];
  private head = 0;

  count(now: number, windowMs: number): number {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - windowMs)
      this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  add(now: number): void {
    this.times.push(now);
  }
}

/** Counts each project's calls per quota over a sliding window and refuses those beyond the limit. */
export class QuotaEnforcer {
  readonly windowMs: number;
  readonly limits: Readonly<Record<QuotaName, number>>;
  /** Calls refused with RESOURCE_EXHAUSTED, by quota (since start or `resetCounts`). */
  readonly refused: Record<QuotaName, number> = { reads: 0, writes: 0, accesses: 0 };
  /** Calls admitted, by quota (since start or `resetCounts`). */
  readonly admitted: Record<QuotaName, number> = { reads: 0, writes: 0, accesses: 0 };
  private readonly windows = new Map<string, Window>();

  /** @throws RangeError for a window or limit that is not a positive number. */
  constructor(settings: QuotaSettings = {}) {
    this.windowMs = settings.windowMs ?? 60_000;
    this.limits = { ...SECRET_MANAGER_QUOTAS, ...settings.limits };
    if (!(this.windowMs > 0) || Object.values(this.limits).some((l) => !(l > 0)))
      throw new RangeError('quota window and limits must be positive');
  }

  /** Admits one call of `method` on `resource` (its project is the resource's), or says why not. */
  admit(method: MethodName, resource: string, now = performance.now()): QuotaRefusal | undefined {
    const quota = QUOTA_OF[method];
    const project = /^projects\/([^/]+)/.exec(resource)?.[1] ?? '';
    const key = `${project}\u0000${quota}`;
    let window = this.windows.get(key);
    if (window === undefined) {
      window = new Window();
      this.windows.set(key, window);
    }
    const limit = this.limits[quota];
    if (window.count(now, this.windowMs) >= limit) {
      this.refused[quota] += 1;
      const { title, metric, limit: limitName } = NAMES[quota];
      const consumer = `projects/${project}`;
      return {
        quota,
        project,
        message: `Quota exceeded for quota metric '${title}' and limit '${title} per minute per project' of service 'secretmanager.googleapis.com' for consumer '${consumer}'.`,
        metadata: {
          quota_metric: metric,
          quota_limit: limitName,
          quota_limit_value: String(limit),
          service: 'secretmanager.googleapis.com',
          consumer,
        },
      };
    }
    window.add(now);
    this.admitted[quota] += 1;
    return undefined;
  }

  /** Zeroes the counts; the windows keep what they hold (quota is real time, not a count). */
  resetCounts(): void {
    for (const q of QUOTA_NAMES) {
      this.refused[q] = 0;
      this.admitted[q] = 0;
    }
  }
}

/** Protobuf wire encoding of what `statusDetails` needs: varint and length-delimited fields only. */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
const field = (number: number, value: Buffer | string): Buffer => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);
};
const any = (type: string, value: Buffer): Buffer =>
  Buffer.concat([field(1, `type.googleapis.com/${type}`), field(2, value)]);

/**
 * The `grpc-status-details-bin` trailer of a refusal: a google.rpc.Status holding the ErrorInfo
 * (reason RATE_LIMIT_EXCEEDED, the quota's metadata) and a QuotaFailure, as the service sends. gax
 * decodes it into the error's `reason`, `errorInfoMetadata` and `statusDetails`.
 */
export function statusDetails(code: number, refusal: QuotaRefusal): Buffer {
  const metadata = Object.entries(refusal.metadata).map(([k, v]) =>
    field(3, Buffer.concat([field(1, k), field(2, v)])),
  );
  const errorInfo = Buffer.concat([field(1, 'RATE_LIMIT_EXCEEDED'), field(2, 'googleapis.com'), ...metadata]);
  const violation = Buffer.concat([field(1, refusal.metadata.consumer ?? ''), field(2, refusal.message)]);
  const quotaFailure = field(1, violation);
  return Buffer.concat([
    varint(1 << 3),
    varint(code),
    field(2, refusal.message),
    field(3, any('google.rpc.ErrorInfo', errorInfo)),
    field(3, any('google.rpc.QuotaFailure', quotaFailure)),
  ]);
}
