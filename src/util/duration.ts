import { z } from 'zod';

/** A unit of a duration: milliseconds, seconds, minutes, hours, days. */
type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

const UNIT_MS: Readonly<Record<DurationUnit, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** What one setting accepts: which units, what a bare number means, whether a fraction may be given. */
export interface DurationSyntax {
  readonly units: readonly DurationUnit[];
  /** The unit of a number written without one; a unit is required when absent. */
  readonly bare?: DurationUnit;
  /** Whether `1.5m` is accepted (default true). */
  readonly fractions?: boolean;
}

/** Command-line flags (`pull-secret dev --poll-interval`): `500ms`, `2s`, `1.5m`, `1h`; a bare number is seconds. */
const FLAG_DURATION: DurationSyntax = { units: ['ms', 's', 'm', 'h'], bare: 's' };
/** Configuration sections: `500ms`, `30s`, `10m`, `12h`, `1d`; a unit is required (a YAML number is milliseconds). */
export const CONFIG_DURATION: DurationSyntax = { units: ['ms', 's', 'm', 'h', 'd'] };

const GRAMMAR = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/;

/**
 * Parses a duration such as `500ms`, `2s`, `1.5m`, `30m`, `1h` or `1d` into milliseconds (rounded to
 * a whole millisecond) as `syntax` allows it. Returns undefined for anything else (negative, empty,
 * unknown or missing unit, a fraction where none is allowed).
 */
export function parseDuration(text: string, syntax: DurationSyntax = FLAG_DURATION): number | undefined {
  const match = GRAMMAR.exec(text.trim());
  if (match === null) return undefined;
  const [, amount = '', written = ''] = match;
  const unit = written === '' ? syntax.bare : syntax.units.find((u) => u === written);
  if (unit === undefined) return undefined;
  if (syntax.fractions === false && amount.includes('.')) return undefined;
  const ms = Number(amount) * UNIT_MS[unit];
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Milliseconds as the shortest readable duration: `500ms`, `10s`, `1.5m`, `30m`, `2h`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${+(ms / 1_000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)}m`;
  return `${+(ms / 3_600_000).toFixed(1)}h`;
}

/**
 * A configuration duration in milliseconds: a whole non-negative number of milliseconds, or text in
 * {@link CONFIG_DURATION}; `rule` is the message of malformed text.
 */
export function durationMsSchema(rule: string) {
  return z
    .union([
      z.number().int().nonnegative(),
      z.string().refine((v) => parseDuration(v, CONFIG_DURATION) !== undefined, rule),
    ])
    .transform((v) => (typeof v === 'number' ? v : (parseDuration(v, CONFIG_DURATION) ?? 0)));
}
