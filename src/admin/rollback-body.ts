import { CONFIG_DURATION, parseDuration } from '../util/duration.js';

/** A rollback's parameters as the admin API takes them (docs/admin-api.md). */
export interface RollbackFields {
  toVersion?: string;
  /** Why (the pin's reason). */
  reason?: string;
  /** When the pin ends (RFC 3339), from `expiresIn` (`"4h"`). */
  expiresAt?: string;
}

const VERSION_ID = /^[A-Za-z0-9-]{1,64}$/;
/** A pin's reason: printable, no control characters (it goes into logs and status). */
const PIN_REASON = /^[^\p{Cc}]{1,200}$/u;

/**
 * A rollback's body checked: `toVersion` a version id, `reason` 1-200 printable characters,
 * `expiresIn` a duration (`30m`, `4h`, `2d`). Absent fields stay absent.
 * @throws what `bad` returns, with the rule broken
 */
export function rollbackFields(
  body: Readonly<Record<string, string>>,
  bad: (detail: string) => Error,
): RollbackFields {
  const fields: RollbackFields = {};
  if (body.toVersion !== undefined) {
    if (!VERSION_ID.test(body.toVersion)) throw bad('toVersion must be a version id such as "3"');
    fields.toVersion = body.toVersion;
  }
  if (body.reason !== undefined) {
    if (!PIN_REASON.test(body.reason)) throw bad('reason must be 1-200 printable characters');
    fields.reason = body.reason;
  }
  if (body.expiresIn !== undefined) {
    const ms = parseDuration(body.expiresIn, CONFIG_DURATION);
    if (ms === undefined || ms <= 0) throw bad('expiresIn must be a duration such as "30m", "4h" or "2d"');
    fields.expiresAt = new Date(Date.now() + ms).toISOString();
  }
  return fields;
}
