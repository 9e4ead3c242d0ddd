import type { Cluster, ResourceCondition } from './types.js';
import { copyRecord, isPlainRecord, isTimestamp } from './quick-check.js';

/**
 * A fast path for `clusterSchema` (schemas.ts), which the adapter applies to every event's
 * `GET /clusters/{id}`: the same checks written out by hand, building the same output (the known
 * fields in the schema's order, unknown ones dropped, `labels` defaulting to `{}`), with none of
 * the schema's per-field bookkeeping. It only ever says yes: `undefined` means "not sure", and the
 * caller then runs the schema, whose answer (and error message) stands. Anything unusual (a
 * `__proto__` key, a non-plain object) is left to the schema.
 * Timestamps are checked with the schema's own RFC 3339 pattern, so both agree on every date.
 */
export function quickCluster(json: unknown): Cluster | undefined {
  if (!isPlainRecord(json)) return undefined;
  const {
    id,
    kind,
    href,
    name,
    generation,
    labels,
    spec,
    status,
    created_time,
    updated_time,
    created_by,
    updated_by,
    deleted_time,
    deleted_by,
  } = json;
  if (!isString(id) || id.length < 1 || !isString(kind) || !isString(name)) return undefined;
  if (!isOptionalString(href)) return undefined;
  if (
    typeof generation !== 'number' ||
    !Number.isSafeInteger(generation) ||
    generation < 1 ||
    generation > 2 ** 31 - 1
  )
    return undefined;
  const outLabels = labels === undefined ? {} : copyRecord(labels, isString);
  const outSpec = copyRecord(spec);
  if (outLabels === undefined || outSpec === undefined) return undefined;
  if (!isPlainRecord(status) || !Array.isArray(status.conditions)) return undefined;
  const conditions: ResourceCondition[] = [];
  for (const c of status.conditions as unknown[]) {
    const condition = quickCondition(c);
    if (condition === undefined) return undefined;
    conditions.push(condition);
  }
  if (!isTimestamp(created_time) || !isTimestamp(updated_time)) return undefined;
  if (!isOptionalString(created_by) || !isOptionalString(updated_by) || !isOptionalString(deleted_by))
    return undefined;
  if (deleted_time !== undefined && !isTimestamp(deleted_time)) return undefined;
  const cluster: Cluster = { id, kind } as Cluster;
  if (href !== undefined) cluster.href = href;
  cluster.name = name;
  cluster.generation = generation;
  cluster.labels = outLabels as Record<string, string>;
  cluster.spec = outSpec;
  cluster.status = { conditions };
  cluster.created_time = created_time;
  cluster.updated_time = updated_time;
  if (created_by !== undefined) cluster.created_by = created_by;
  if (updated_by !== undefined) cluster.updated_by = updated_by;
  if (deleted_time !== undefined) cluster.deleted_time = deleted_time;
  if (deleted_by !== undefined) cluster.deleted_by = deleted_by;
  return cluster;
}

function quickCondition(json: unknown): ResourceCondition | undefined {
  if (!isPlainRecord(json)) return undefined;
  const {
    type,
    status,
    reason,
    message,
    observed_generation,
    created_time,
    last_updated_time,
    last_transition_time,
  } = json;
  if (!isString(type) || type.length < 1 || (status !== 'True' && status !== 'False')) return undefined;
  if (!isOptionalString(reason) || !isOptionalString(message)) return undefined;
  if (typeof observed_generation !== 'number' || !Number.isSafeInteger(observed_generation)) return undefined;
  if (!isTimestamp(created_time) || !isTimestamp(last_updated_time) || !isTimestamp(last_transition_time))
    return undefined;
  const condition = { type, status } as ResourceCondition;
  if (reason !== undefined) condition.reason = reason;
  if (message !== undefined) condition.message = message;
  condition.observed_generation = observed_generation;
  condition.created_time = created_time;
  condition.last_updated_time = last_updated_time;
  condition.last_transition_time = last_transition_time;
  return condition;
}

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

/** A string, or absent (JSON has no `undefined`, so a present key always has a value to check). */
function isOptionalString(v: unknown): v is string | undefined {
  return v === undefined || typeof v === 'string';
}
