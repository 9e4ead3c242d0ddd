import type {
  AdapterCondition,
  AdapterStatus,
  AdapterStatusCreateRequest,
  Cluster,
  ValidationError,
} from '../../hyperfleet/types.js';
import { MANDATORY_CONDITIONS } from '../../hyperfleet/types.js';
import { ProblemError } from './problem.js';

/** Limits on `observed_time` relative to the server clock. */
export interface TimeLimits {
  /** How far in the future a report may be (clock skew), in ms. */
  maxClockSkewMs: number;
  /** How old a report may be, in ms. */
  maxObservedAgeMs: number;
}

/** Why a valid report was not stored (the API answers 204 for all of them). */
export type DiscardReason =
  | 'stale-generation'
  | 'future-generation'
  | 'zero-observed-time'
  | 'stale-observed-time'
  | 'available-unknown';

/**
 * hyperfleet-api's window for `observed_time` (pkg/handlers/validation.go `maxObservedTimeSkew`,
 * `maxObservedTimeAge`, at the commit pinning hyperfleet-api-spec v1.0.25,
 * https://github.com/openshift-hyperfleet/hyperfleet-api/blob/031482f0ab4196d3b92398a82ef14710782a281b/pkg/handlers/validation.go).
 */
export const OBSERVED_TIME_LIMITS: TimeLimits = { maxClockSkewMs: 5 * 60_000, maxObservedAgeMs: 30 * 60_000 };

/** Go's `time.Duration` text (`5m0s`, `30m0s`, `1h0m0s`), as the API's messages print the limits. */
function goDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/** The zero `time.Time` Go decodes `0001-01-01T00:00:00Z` to: not range-checked, discarded by the service. */
const isZeroTime = (text: string): boolean => /^0001-01-01T00:00:00(\.0+)?(Z|[+-]00:00)$/.test(text);

/** Adapter names become condition types (`{Adapter}Successful`), so keep them to a tame alphabet. */
const ADAPTER_NAME = /^[a-z0-9]([-a-z0-9_]{0,61}[a-z0-9])?$/;

/**
 * The request rules beyond the schema (which the caller checked already). Each broken rule is a
 * field error; the API answers 400 `HYPERFLEET-VAL-000` with all of them.
 *
 * Where the contract is silent, the stand-in is strict: duplicate condition types and
 * `observed_generation` < 1 are refused, as they can only come from a buggy adapter.
 *
 * @throws ProblemError (validation)
 */
export function checkReportRules(report: AdapterStatusCreateRequest, now: Date, limits: TimeLimits): void {
  const errors: ValidationError[] = [];
  if (!ADAPTER_NAME.test(report.adapter)) {
    errors.push({
      field: 'adapter',
      constraint: 'pattern',
      message: 'must be 1-63 lowercase letters, digits, "-" or "_"',
    });
  }
  if (report.observed_generation < 1)
    errors.push({ field: 'observed_generation', constraint: 'min', message: 'must be at least 1' });
  const types = report.conditions.map((c) => c.type);
  for (const mandatory of MANDATORY_CONDITIONS) {
    if (!types.includes(mandatory)) {
      errors.push({
        field: 'conditions',
        constraint: 'required',
        message: `missing mandatory condition '${mandatory}': all adapters must report Available, Applied, and Health`,
      });
    }
  }
  types.forEach((type, i) => {
    if (types.indexOf(type) !== i)
      errors.push({
        field: `conditions[${i}].type`,
        constraint: 'unique',
        message: `condition '${type}' appears more than once`,
      });
  });
  if (errors.length > 0) throw new ProblemError('validation', 'Invalid adapter status report', errors);
  // The API's own messages, 400 HYPERFLEET-VAL-000 without field errors (`validateObservedTimeRange`).
  if (isZeroTime(report.observed_time)) return;
  const observed = Date.parse(report.observed_time);
  if (observed > now.getTime() + limits.maxClockSkewMs) {
    const skew = goDuration(limits.maxClockSkewMs);
    throw new ProblemError('validation', `observed_time must not be more than ${skew} in the future`);
  }
  if (observed < now.getTime() - limits.maxObservedAgeMs) {
    const age = goDuration(limits.maxObservedAgeMs);
    throw new ProblemError('validation', `observed_time must not be more than ${age} in the past`);
  }
}

/**
 * The API's discard rules (204), in its order (hyperfleet-api pkg/services/adapter_status_validation.go
 * `validateAndClassifyAdapterStatus`,
 * https://github.com/openshift-hyperfleet/hyperfleet-api/blob/031482f0ab4196d3b92398a82ef14710782a281b/pkg/services/adapter_status_validation.go):
 * generation ahead of the cluster; older generation than stored; a zero `observed_time`; same
 * generation but observed before the stored report; `Available=Unknown` once the adapter has a
 * stored report (the adapter's first report may say Unknown and is stored, but feeds no cluster
 * condition, which are True/False only; a later one is discarded whole, whatever else it carries, so
 * the last True/False stands). `undefined` means: store it.
 */
export function discardReason(
  report: AdapterStatusCreateRequest,
  cluster: Cluster,
  stored: AdapterStatus | undefined,
): DiscardReason | undefined {
  if (report.observed_generation > cluster.generation) return 'future-generation';
  if (stored !== undefined && report.observed_generation < stored.observed_generation)
    return 'stale-generation';
  if (isZeroTime(report.observed_time)) return 'zero-observed-time';
  if (
    stored !== undefined &&
    report.observed_generation === stored.observed_generation &&
    Date.parse(report.observed_time) < Date.parse(stored.last_report_time)
  ) {
    return 'stale-observed-time';
  }
  if (stored !== undefined && report.conditions.find((c) => c.type === 'Available')?.status === 'Unknown')
    return 'available-unknown';
  return undefined;
}

/**
 * The stored form of an accepted report: a full replacement of the previous one. `last_report_time` is
 * the report's `observed_time`; a condition's `last_transition_time` moves only when its status changes.
 */
export function toAdapterStatus(
  report: AdapterStatusCreateRequest,
  stored: AdapterStatus | undefined,
  now: Date,
): AdapterStatus {
  const observed = new Date(report.observed_time).toISOString();
  const conditions: AdapterCondition[] = report.conditions.map((c) => {
    const previous = stored?.conditions.find((p) => p.type === c.type);
    return {
      type: c.type,
      status: c.status,
      ...(c.reason === undefined ? {} : { reason: c.reason }),
      ...(c.message === undefined ? {} : { message: c.message }),
      last_transition_time:
        previous !== undefined && previous.status === c.status ? previous.last_transition_time : observed,
    };
  });
  return {
    adapter: report.adapter,
    observed_generation: report.observed_generation,
    conditions,
    ...(report.data === undefined ? {} : { data: report.data }),
    ...(report.metadata === undefined ? {} : { metadata: report.metadata }),
    created_time: stored?.created_time ?? now.toISOString(),
    last_report_time: observed,
  };
}
