import { copyRecord, isPlainRecord, isTimestamp } from './quick-check.js';
import {
  MANDATORY_CONDITIONS,
  type AdapterStatusMetadata,
  type AdapterStatusReport,
  type ConditionRequest,
} from './types.js';

const REPORT_KEYS: ReadonlySet<string> = new Set([
  'adapter',
  'observed_generation',
  'observed_time',
  'conditions',
  'data',
  'metadata',
]);
const METADATA_KEYS: ReadonlySet<string> = new Set([
  'job_name',
  'job_namespace',
  'attempt',
  'started_time',
  'completed_time',
  'duration',
]);
const CONDITION_STATUS: ReadonlySet<unknown> = new Set(['True', 'False', 'Unknown']);

/**
 * A fast path for `adapterStatusReportSchema` (schemas.ts), which checks every status report before
 * it is sent: the same rules written out by hand (strict keys, types, mandatory conditions, no
 * duplicate), building the schema's exact output. It only ever says yes: `undefined` means "not
 * sure", and the caller then runs the schema, whose answer and message stand.
 * Timestamps are checked with the schema's own RFC 3339 pattern.
 */
export function quickStatusReport(report: unknown): AdapterStatusReport | undefined {
  if (!isPlainRecord(report) || !onlyKeys(report, REPORT_KEYS)) return undefined;
  const { adapter, observed_generation, observed_time, conditions, data, metadata } = report;
  if (typeof adapter !== 'string' || adapter.length < 1) return undefined;
  if (
    typeof observed_generation !== 'number' ||
    !Number.isSafeInteger(observed_generation) ||
    observed_generation < 1 ||
    observed_generation > 2 ** 31 - 1
  )
    return undefined;
  if (!isTimestamp(observed_time)) return undefined;
  if (!Array.isArray(conditions)) return undefined;
  const outConditions: ConditionRequest[] = [];
  const types = new Set<string>();
  for (const c of conditions as unknown[]) {
    const condition = quickCondition(c);
    if (condition === undefined || types.has(condition.type)) return undefined;
    types.add(condition.type);
    outConditions.push(condition);
  }
  if (!MANDATORY_CONDITIONS.every((type) => types.has(type))) return undefined;
  const out: AdapterStatusReport = { adapter, observed_generation, observed_time, conditions: outConditions };
  if ('data' in report) {
    if (data === undefined) out.data = undefined;
    else {
      const copy = copyRecord(data);
      if (copy === undefined) return undefined;
      out.data = copy;
    }
  }
  if ('metadata' in report) {
    if (metadata === undefined) out.metadata = undefined;
    else {
      const copy = quickMetadata(metadata);
      if (copy === undefined) return undefined;
      out.metadata = copy;
    }
  }
  return out;
}

function quickCondition(json: unknown): ConditionRequest | undefined {
  if (!isPlainRecord(json)) return undefined;
  const { type, status, reason, message } = json;
  if (typeof type !== 'string' || type.length < 1 || !CONDITION_STATUS.has(status)) return undefined;
  const condition = { type, status } as ConditionRequest;
  for (const [key, value] of [
    ['reason', reason],
    ['message', message],
  ] as const) {
    if (!(key in json)) continue;
    if (value !== undefined && typeof value !== 'string') return undefined;
    condition[key] = value;
  }
  return condition;
}

function quickMetadata(json: unknown): AdapterStatusMetadata | undefined {
  if (!isPlainRecord(json) || !onlyKeys(json, METADATA_KEYS)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of METADATA_KEYS) {
    if (!(key in json)) continue;
    const value = json[key];
    if (value !== undefined) {
      if (
        key === 'attempt'
          ? typeof value !== 'number' || !Number.isSafeInteger(value)
          : typeof value !== 'string'
      )
        return undefined;
      if ((key === 'started_time' || key === 'completed_time') && !isTimestamp(value)) return undefined;
    }
    out[key] = value;
  }
  return out;
}

function onlyKeys(v: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key of Object.keys(v)) if (!allowed.has(key)) return false;
  return true;
}
