import { canonicalize } from '../pullsecret/canonical.js';
import type { ConsumerStatus, ShareCondition, ShareStatus } from '../kube/share-types.js';

/** Reasons of the `Ready` condition of a share (docs/shares.md). */
export const READY_REASONS = ['Projected', 'ConsumersFailed', 'SourceNotFound', 'InvalidSpec'] as const;
export type ReadyReason = (typeof READY_REASONS)[number];

/** A one-line count of the consumers' results. */
export function summarize(consumers: readonly ConsumerStatus[]): string {
  const count = (r: ConsumerStatus['result']) => consumers.filter((c) => c.result === r).length;
  return (
    `${count('granted')} granted, ${count('denied')} denied, ${count('conflict')} conflict, ` +
    `${count('error')} error`
  );
}

/**
 * The status to write: the Ready condition (its lastTransitionTime kept while its status does not
 * change) and the consumers sorted by namespace. Pure but for the clock.
 */
export function buildStatus(input: {
  generation?: number;
  previous?: Partial<ShareStatus>;
  reason: ReadyReason;
  message: string;
  consumers: ConsumerStatus[];
  now?: Date;
}): ShareStatus {
  const ready = input.reason === 'Projected';
  const status = ready ? 'True' : 'False';
  const before = input.previous?.conditions?.find((c) => c.type === 'Ready');
  const condition: ShareCondition = {
    type: 'Ready',
    status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime:
      before?.status === status
        ? before.lastTransitionTime
        : (input.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  if (input.generation !== undefined) condition.observedGeneration = input.generation;
  const consumers = [...input.consumers].sort((a, b) =>
    a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0,
  );
  const out: ShareStatus = { conditions: [condition], consumers };
  if (input.generation !== undefined) out.observedGeneration = input.generation;
  return out;
}

/** True when the stored status already says the same (no write needed). */
export function sameStatus(stored: unknown, next: ShareStatus): boolean {
  // canonicalize sorts keys; JSON drops undefined values, so an absent and an undefined field compare equal.
  return canonicalize(stored ?? {}) === canonicalize(next);
}
