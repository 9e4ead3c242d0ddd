import { setTimeout as sleep } from 'node:timers/promises';
import { PullSecretError, toPullSecretError } from '../errors/index.js';
import { parseStrictJson } from '../pullsecret/strict-json.js';
import { mergeTransferredPullSecret, type TransferMerge } from '../pullsecret/transfer-merge.js';
import { isObject, validatePullSecret, type ValidateOptions } from '../pullsecret/validate.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import type { AccountServiceClient } from './client.js';

/** The registry whose `auth` is the cluster's token for the account service (as insights-operator uses it). */
export const CLOUD_REGISTRY = 'cloud.openshift.com';

/**
 * What a transfer check found, before anything is written. Each kind has a condition `reason` and a
 * metric `label` (`TRANSFER_REASONS`). Messages never hold a credential.
 * - `none`: no transfer open (204, empty body, no items);
 * - `no-token`: the current pull secret has no `cloud.openshift.com` entry, so the cluster cannot ask;
 * - `current-invalid`: the current pull secret is not valid: nothing to merge into, the cluster does not ask;
 * - `unchanged`: an accepted transfer whose merge gives the current content (no write);
 * - `update`: an accepted transfer whose merge differs: `data` is to be written (see `applyTransfer`),
 *   `transferred` is the transfer's own pull secret (a credential, for the applied-transfer record);
 * - `multiple`: more than one accepted transfer: nothing is written, reported for a human;
 * - `corrupted`: the transfer's `secret` is empty or not a usable pull secret: nothing is written;
 * - `unexpected`: the answer broke the contract (not JSON, wrong shape, another cluster);
 * - `refused`: a 4xx, not retried (`httpStatus` named in the message);
 * - `unreachable`: 5xx / timeout / network errors until the backoff ran out (Health=False, Degraded).
 */
export type TransferDecision =
  | { kind: 'none' }
  | { kind: 'no-token'; message: string }
  | { kind: 'current-invalid'; message: string }
  | { kind: 'unchanged'; transferId: string }
  | {
      kind: 'update';
      transferId: string;
      data: Buffer;
      transferred: string;
      replaced: string[];
      added: string[];
      credentials?: TransferMerge['credentials'];
    }
  | { kind: 'multiple'; transferIds: string[]; message: string }
  | { kind: 'corrupted'; transferId: string; message: string }
  | { kind: 'unexpected'; message: string; error: PullSecretError }
  | { kind: 'refused'; message: string; error: PullSecretError }
  | { kind: 'unreachable'; attempts: number; message: string; error: PullSecretError };

/** After `applyTransfer`: the write happened (`updated`) or failed (`update-failed`); other decisions pass through. */
export type TransferOutcome =
  | Exclude<TransferDecision, { kind: 'update' }>
  | {
      kind: 'updated';
      transferId: string;
      replaced: string[];
      added: string[];
      credentials?: TransferMerge['credentials'];
      appliedAt: string;
    }
  | { kind: 'update-failed'; transferId: string; message: string; error: PullSecretError };

/** Condition reason (PascalCase) and metric label of each decision and outcome kind. */
export const TRANSFER_REASONS = {
  none: { reason: 'NoTransferOpen', label: 'none' },
  'no-token': { reason: 'TransferTokenMissing', label: 'no_token' },
  'current-invalid': { reason: 'InvalidPullSecret', label: 'current_invalid' },
  unchanged: { reason: 'TransferAlreadyApplied', label: 'unchanged' },
  update: { reason: 'TransferPending', label: 'update' },
  updated: { reason: 'TransferApplied', label: 'updated' },
  multiple: { reason: 'MultipleTransfersAccepted', label: 'multiple' },
  corrupted: { reason: 'TransferSecretCorrupted', label: 'corrupted' },
  unexpected: { reason: 'AccountServiceUnexpectedAnswer', label: 'unexpected' },
  refused: { reason: 'AccountServiceRefused', label: 'refused' },
  unreachable: { reason: 'AccountServiceUnavailable', label: 'unreachable' },
  'update-failed': { reason: 'TransferUpdateFailed', label: 'update_failed' },
} as const satisfies Record<TransferOutcome['kind'] | 'update', { reason: string; label: string }>;

/** Number of retries after the first attempt when the account service answers 5xx or not at all. */
export const TRANSFER_RETRY_STEPS = 5;

/**
 * Delays before each retry: `intervalMs / 24`, doubling, `TRANSFER_RETRY_STEPS` of them, each capped
 * at `intervalMs` (12 h: 30 min, 1 h, 2 h, 4 h, 8 h).
 */
export function transferBackoff(intervalMs: number): number[] {
  return Array.from({ length: TRANSFER_RETRY_STEPS }, (_, i) =>
    Math.min(intervalMs, (intervalMs / 24) * 2 ** i),
  );
}

export interface TransferCheckOptions {
  client: AccountServiceClient;
  /** The check interval; sets the backoff (`transferBackoff`). */
  intervalMs: number;
  /** Limits of the configured target, for the merged result. */
  limits: ValidateOptions;
  /** Retries of 5xx answers (0-5, default 5); an on-demand check may want fewer than the fleet's. */
  retries?: number;
  /** Waits between retries (injectable for tests); default: a timer that `signal` cancels. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** Called before each wait, for logging (no credential in it). */
  onRetry?: (info: { attempt: number; delayMs: number; error: PullSecretError }) => void;
}

/**
 * The `cloud.openshift.com` `auth` of a pull secret, or `undefined` when it has none. Never throws.
 * The result is a credential: never log it.
 */
export function cloudToken(pullSecret: Uint8Array): string | undefined {
  const parsed = parseStrictJson(Buffer.from(pullSecret).toString('utf8'));
  if (!parsed.ok || !isObject(parsed.value) || !isObject(parsed.value.auths)) return undefined;
  const entry = parsed.value.auths[CLOUD_REGISTRY];
  const auth = isObject(entry) ? entry.auth : undefined;
  return typeof auth === 'string' && /^[\x21-\x7e]+$/.test(auth) ? auth : undefined;
}

/**
 * Asks the account service for the cluster's accepted transfer and decides what to do with it by
 * the merge rules (`mergeTransferredPullSecret`). Writes nothing. 5xx, timeouts and network errors
 * are retried by `transferBackoff(intervalMs)`; 4xx and contract breaks are not.
 *
 * The current pull secret's and the transfer's credentials are registered with the redactor while
 * the check runs; whoever writes an `update`'s `data` registers it for the write.
 *
 * Never throws except ABORTED (when `signal` fires): every other failure is a decision.
 */
export async function checkTransfer(
  clusterId: string,
  current: Uint8Array,
  options: TransferCheckOptions,
): Promise<TransferDecision> {
  // Registered for the check only: a fleet's worth of registrations would slow every log line.
  const releases = [redactor.register(credentialStrings(Buffer.from(current).toString('utf8')))];
  try {
    return await check(clusterId, current, options, releases);
  } finally {
    for (const release of releases) release();
  }
}

async function check(
  clusterId: string,
  current: Uint8Array,
  options: TransferCheckOptions,
  releases: (() => void)[],
): Promise<TransferDecision> {
  try {
    validatePullSecret(current, options.limits);
  } catch (err) {
    return { kind: 'current-invalid', message: toPullSecretError(err).message };
  }
  const token = cloudToken(current);
  if (token === undefined)
    return {
      kind: 'no-token',
      message:
        `the cluster's pull secret has no ${CLOUD_REGISTRY} entry with an auth; it cannot ask the ` +
        `account service`,
    };
  const delays = transferBackoff(options.intervalMs).slice(0, options.retries ?? TRANSFER_RETRY_STEPS);
  const wait = options.sleep ?? ((ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }));
  for (let attempt = 1; ; attempt++) {
    let answer;
    try {
      answer = await options.client.transfers(clusterId, token, options.signal);
    } catch (err) {
      const error = toPullSecretError(err);
      if (error.code === 'ABORTED') throw error;
      if (error.code === 'ACCOUNT_SERVICE_UNAVAILABLE') {
        const delayMs = delays[attempt - 1];
        if (delayMs === undefined)
          return { kind: 'unreachable', attempts: attempt, message: error.message, error };
        options.onRetry?.({ attempt, delayMs, error });
        try {
          await wait(delayMs, options.signal);
        } catch (abort) {
          throw new PullSecretError('ABORTED', 'operation aborted while waiting to retry', { cause: abort });
        }
        continue;
      }
      if (error.code === 'ACCOUNT_SERVICE_REFUSED') return { kind: 'refused', message: error.message, error };
      return { kind: 'unexpected', message: error.message, error };
    }
    if (answer.kind === 'accepted')
      releases.push(
        redactor.register(
          answer.items.flatMap((item) => (item.secret === undefined ? [] : credentialStrings(item.secret))),
        ),
      );
    return decide(answer, current, options.limits);
  }
}

function decide(
  answer: Awaited<ReturnType<AccountServiceClient['transfers']>>,
  current: Uint8Array,
  limits: ValidateOptions,
): TransferDecision {
  if (answer.kind === 'none') return { kind: 'none' };
  const [first, ...others] = answer.items;
  if (first === undefined) return { kind: 'none' };
  if (others.length > 0 || answer.total > 1) {
    const transferIds = answer.items.map((item) => item.id);
    return {
      kind: 'multiple',
      transferIds,
      message: `${Math.max(answer.total, transferIds.length)} accepted transfers for one cluster; none applied`,
    };
  }
  if (first.secret === undefined || first.secret.trim() === '') {
    return {
      kind: 'corrupted',
      transferId: first.id,
      message: 'the accepted transfer carries no pull secret',
    };
  }
  try {
    const merged = mergeTransferredPullSecret(current, first.secret, limits);
    if (!merged.changed) return { kind: 'unchanged', transferId: first.id };
    const credentials = merged.credentials.length === 0 ? {} : { credentials: merged.credentials };
    return {
      kind: 'update',
      transferId: first.id,
      data: merged.data,
      transferred: first.secret,
      replaced: merged.replaced,
      added: merged.added,
      ...credentials,
    };
  } catch (err) {
    return { kind: 'corrupted', transferId: first.id, message: toPullSecretError(err).message };
  }
}

/**
 * Carries out a decision: for `update`, calls `write(data)` once and reports `updated` (with the
 * time it was applied, from `now`) or `update-failed`; every other decision passes through
 * unchanged. Never throws.
 */
export async function applyTransfer(
  decision: TransferDecision,
  write: (data: Buffer) => Promise<void>,
  now: () => Date = () => new Date(),
): Promise<TransferOutcome> {
  if (decision.kind !== 'update') return decision;
  try {
    await write(decision.data);
  } catch (err) {
    const error = toPullSecretError(err);
    return { kind: 'update-failed', transferId: decision.transferId, message: error.message, error };
  }
  const { transferId, replaced, added, credentials } = decision;
  return {
    kind: 'updated',
    transferId,
    replaced,
    added,
    ...(credentials === undefined ? {} : { credentials }),
    appliedAt: now().toISOString(),
  };
}
