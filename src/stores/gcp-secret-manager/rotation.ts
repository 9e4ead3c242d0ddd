import { z } from 'zod';
import { parseDuration, type DurationSyntax } from '../../util/duration.js';

/**
 * Secret Manager rotation settings of the secrets the store creates (`rotation.rotation_period`,
 * `rotation.next_rotation_time`, `topics`): the service then publishes a `SECRET_ROTATE`
 * notification on the topics every period, and every change of the secret or its versions too.
 * The service's rules are checked up front: a period of 1 hour to 100 years, rotation only with
 * topics, at most 10 topics of the form `projects/P/topics/T`.
 */

/** Shortest rotation period the service accepts (1 hour), in seconds. */
const MIN_ROTATION_PERIOD_SECONDS = 3600;
/** Longest rotation period (and farthest next rotation) the service accepts: 100 years, in seconds. */
const MAX_ROTATION_SECONDS = 3_153_600_000;
/** The service refuses a next rotation time less than 5 minutes ahead. */
const MIN_NEXT_ROTATION_LEAD_SECONDS = 300;
/** Most topics one secret may name. */
const MAX_TOPICS = 10;

/** Whole seconds, minutes, hours or days; a bare number is seconds. */
const SECONDS_DURATION: DurationSyntax = { units: ['s', 'm', 'h', 'd'], bare: 's', fractions: false };
/** A Pub/Sub topic: `projects/PROJECT/topics/TOPIC` (topic ids: letter first, 3-255 of `[A-Za-z0-9-_.~+%]`). */
const TOPIC = /^projects\/[a-z][a-z0-9.:-]{2,99}\/topics\/[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;
/** RFC 3339 with a zone (`2026-12-01T00:00:00Z`, `...+01:00`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const PERIOD_RULE =
  `must be a duration of 1 hour to 100 years: seconds ("86400", "86400s") or a number ` +
  `with m, h or d ("720h", "30d")`;
const NEXT_RULE = 'must be an RFC 3339 time with a zone, e.g. 2026-12-01T00:00:00Z';
const TOPIC_RULE =
  `must be up to ${MAX_TOPICS} Pub/Sub topics projects/PROJECT/topics/TOPIC (a list, or ` +
  `one string separated by commas)`;

/** Parses a duration (`3600`, `3600s`, `90m`, `720h`, `30d`) to seconds; `undefined` when malformed. */
function parseDurationSeconds(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const ms = parseDuration(value, SECONDS_DURATION);
  return ms === undefined ? undefined : ms / 1000;
}

/** A duration setting of `min` to `max` seconds, normalized to whole seconds; `rule` is the message of a bad value. */
export function durationSecondsSchema(min: number, max: number, rule: string) {
  return z.union([z.number(), z.string()], { error: rule }).transform((value, ctx) => {
    const seconds = parseDurationSeconds(value);
    if (seconds === undefined || seconds < min || seconds > max) {
      ctx.issues.push({ code: 'custom', message: rule, input: value });
      return z.NEVER;
    }
    return seconds;
  });
}

/** `rotationPeriod`: a duration, normalized to whole seconds. */
export const rotationPeriodSchema = durationSecondsSchema(
  MIN_ROTATION_PERIOD_SECONDS,
  MAX_ROTATION_SECONDS,
  PERIOD_RULE,
);

/** `nextRotationTime`: an RFC 3339 time, normalized to ISO 8601 UTC. */
export const nextRotationTimeSchema = z.string({ error: NEXT_RULE }).transform((value, ctx) => {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) {
    ctx.issues.push({ code: 'custom', message: NEXT_RULE, input: value });
    return z.NEVER;
  }
  return new Date(ms).toISOString();
});

/** `topics`: a list, or (from the environment) one comma-separated string. */
export const topicsSchema = z
  .union([z.array(z.string(), { error: TOPIC_RULE }), z.string({ error: TOPIC_RULE })], { error: TOPIC_RULE })
  .transform((value, ctx) => {
    const list = (Array.isArray(value) ? value : value.split(','))
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (
      list.length === 0 ||
      list.length > MAX_TOPICS ||
      list.some((t) => !TOPIC.test(t)) ||
      new Set(list).size !== list.length
    ) {
      ctx.issues.push({ code: 'custom', message: TOPIC_RULE, input: value });
      return z.NEVER;
    }
    return list;
  });

/** The settings `rotationProblem` checks together. */
interface RotationSettings {
  rotationPeriod?: number | undefined;
  nextRotationTime?: string | undefined;
  topics?: readonly string[] | undefined;
}

/** Cross-field rule: rotation needs topics (the service refuses it otherwise). `undefined` when fine. */
export function rotationProblem(settings: RotationSettings): { path: string; message: string } | undefined {
  const rotates = settings.rotationPeriod !== undefined || settings.nextRotationTime !== undefined;
  if (rotates && (settings.topics === undefined || settings.topics.length === 0)) {
    return {
      path: 'topics',
      message:
        'rotationPeriod and nextRotationTime need topics: Secret Manager sends rotation notifications to ' +
        'Pub/Sub topics (projects/PROJECT/topics/TOPIC)',
    };
  }
  return undefined;
}

/** The `rotation` and `topics` fields of a new Secret; `{}` when none are configured. */
export function rotationFields(
  settings: RotationSettings,
  now: Date = new Date(),
): {
  rotation?: { rotationPeriod?: { seconds: number }; nextRotationTime?: { seconds: number; nanos: number } };
  topics?: { name: string }[];
} {
  const topics =
    settings.topics === undefined || settings.topics.length === 0
      ? undefined
      : settings.topics.map((name) => ({ name }));
  const period = settings.rotationPeriod;
  let next: number | undefined;
  if (settings.nextRotationTime !== undefined) {
    const configured = Date.parse(settings.nextRotationTime);
    // A fixed time that is (nearly) past by now would be refused: the next period from now instead.
    if (configured >= now.getTime() + MIN_NEXT_ROTATION_LEAD_SECONDS * 1000 || period === undefined)
      next = configured;
  }
  if (next === undefined && period !== undefined) next = now.getTime() + period * 1000;
  const rotation =
    period === undefined && next === undefined
      ? undefined
      : {
          ...(period === undefined ? {} : { rotationPeriod: { seconds: period } }),
          ...(next === undefined
            ? {}
            : { nextRotationTime: { seconds: Math.floor(next / 1000), nanos: (next % 1000) * 1_000_000 } }),
        };
  return { ...(rotation === undefined ? {} : { rotation }), ...(topics === undefined ? {} : { topics }) };
}
