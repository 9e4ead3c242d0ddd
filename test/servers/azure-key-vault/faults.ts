/** The Key Vault operations the test server answers (and counts) by name. */
export const OPERATIONS = [
  'GetSecret',
  'SetSecret',
  'UpdateSecret',
  'GetSecretVersions',
  'DeleteSecret',
  'GetDeletedSecret',
  'RecoverDeletedSecret',
  'PurgeDeletedSecret',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/**
 * Fault injection: the next `times` calls of an operation are answered with `status` (and Key
 * Vault's error body) instead of the real answer. `afterApply` applies the call first (the write
 * happens, the answer is lost); `drop` resets the connection instead of answering; `retryAfter`
 * sends a `Retry-After` header (seconds), as Key Vault does with 429 (code Throttled; "Key Vault throttling
 * guidance", https://learn.microsoft.com/azure/key-vault/general/overview-throttling); `delayMs` alone answers
 * normally, late.
 */
export interface FaultSpec {
  operation: Operation | '*';
  status?: number;
  drop?: boolean;
  afterApply?: boolean;
  retryAfter?: number;
  /** Hold the answer back this long (ms), e.g. to run into the client's deadline. */
  delayMs?: number;
  times?: number;
}

const MESSAGES: Record<number, [string, string]> = {
  403: [
    'Forbidden',
    'Caller is not authorized to perform action on resource. If role assignments, deny assignments or role definitions were changed recently, please observe propagation time.',
  ],
  429: ['Throttled', 'Request was not allowed because application exceeded the rate limit of the vault.'],
  500: ['InternalServerError', 'An internal server error occurred.'],
  503: ['ServiceUnavailable', 'The service is temporarily unavailable.'],
};

/** The error body of an injected status. */
export function faultBody(status: number): { code: string; message: string; innerCode?: string } {
  const [code, message] = MESSAGES[status] ?? ['InjectedFault', `Injected fault (${status}).`];
  return status === 403 ? { code, message, innerCode: 'ForbiddenByRbac' } : { code, message };
}

export class FaultInjector {
  private faults: Array<{ spec: FaultSpec; remaining: number }> = [];

  inject(spec: FaultSpec): void {
    if (spec.status === undefined && spec.drop !== true && spec.delayMs === undefined)
      throw new Error('a fault needs a status, drop or delayMs');
    this.faults.push({ spec, remaining: spec.times ?? 1 });
  }

  take(operation: Operation): FaultSpec | undefined {
    const entry = this.faults.find(
      (f) => f.remaining > 0 && (f.spec.operation === operation || f.spec.operation === '*'),
    );
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return entry.spec;
  }

  clear(): void {
    this.faults = [];
  }
}
