import type { z } from 'zod';
import { PullSecretError } from '../errors/index.js';

/** One environment variable, mapped onto a key of the object a schema parses. */
export interface EnvSetting {
  /** Key in the parsed config object. */
  key: string;
  /** One line for `--help` and the configuration reference. */
  help: string;
  /** A secret (a key): never projected into a Job's spec, where anyone who can read Jobs would see it. */
  secret?: boolean;
}

/** Environment variable name → setting. */
export type EnvMapping = Readonly<Record<string, EnvSetting>>;

/** The outcome of reading one schema from the environment: a value, or every problem found. */
export type EnvParse<T> = { ok: true; value: T } | { ok: false; missing: string[]; invalid: string[] };

/**
 * Reads the variables named in `mapping` from `env` (empty strings count as unset) and parses them
 * with `schema`. Problems are collected, not thrown, so callers can report all of them at once.
 */
export function parseEnv<T>(schema: z.ZodType<T>, mapping: EnvMapping, env: NodeJS.ProcessEnv): EnvParse<T> {
  const input: Record<string, string> = {};
  const envNameOfKey = new Map<string, string>();
  for (const [name, { key }] of Object.entries(mapping)) {
    envNameOfKey.set(key, name);
    const raw = env[name];
    if (raw !== undefined && raw !== '') input[key] = raw;
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const issue of parsed.error.issues) {
    const key = String(issue.path[0] ?? '');
    const name = envNameOfKey.get(key) ?? key;
    // Messages from our schemas describe the rule, never echo the value.
    if (!(key in input)) missing.push(name);
    else invalid.push(`invalid environment variable ${name}: ${issue.message}`);
  }
  return { ok: false, missing: [...new Set(missing)], invalid };
}

/**
 * Merges several parse results; throws one CONFIG_MISSING / CONFIG_INVALID error whose message
 * lists every problem, one per line (`missing required environment variable: NAME`).
 */
export function throwEnvProblems(results: ReadonlyArray<EnvParse<unknown>>): void {
  const lines: string[] = [];
  let anyMissing = false;
  for (const r of results) {
    if (r.ok) continue;
    for (const name of r.missing) {
      anyMissing = true;
      lines.push(`missing required environment variable: ${name}`);
    }
    lines.push(...r.invalid);
  }
  if (lines.length > 0) {
    throw new PullSecretError(anyMissing ? 'CONFIG_MISSING' : 'CONFIG_INVALID', lines.join('\n'));
  }
}
