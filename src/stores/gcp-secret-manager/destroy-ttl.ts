import { durationSecondsSchema } from './rotation.js';

/**
 * Delayed destruction of the secrets the store creates (`version_destroy_ttl`): DestroySecretVersion
 * then disables the version and schedules its destruction that long later (`scheduled_destroy_time`);
 * until then an admin can restore it (enable or disable cancels the schedule). The service requires
 * at least 24 hours.
 */

/** Shortest delay the service accepts (24 hours), in seconds. */
const MIN_VERSION_DESTROY_TTL_SECONDS = 86_400;
/** Longest delay accepted here: 1000 days, in seconds. */
const MAX_VERSION_DESTROY_TTL_SECONDS = 86_400_000;

const TTL_RULE =
  'must be a duration of 24 hours to 1000 days: seconds ("86400", "86400s") or a number with m, h or d ("168h", "7d")';

/** `versionDestroyTtl`: a duration, normalized to whole seconds. */
export const versionDestroyTtlSchema = durationSecondsSchema(
  MIN_VERSION_DESTROY_TTL_SECONDS,
  MAX_VERSION_DESTROY_TTL_SECONDS,
  TTL_RULE,
);

/** The `versionDestroyTtl` field of a new Secret; `{}` when not configured. */
export function destroyTtlFields(settings: { versionDestroyTtl?: number | undefined }): {
  versionDestroyTtl?: { seconds: number };
} {
  return settings.versionDestroyTtl === undefined
    ? {}
    : { versionDestroyTtl: { seconds: settings.versionDestroyTtl } };
}
