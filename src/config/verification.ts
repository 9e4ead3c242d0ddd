import { z } from 'zod';
import { isValidRegistryKey } from '../pullsecret/registry-key.js';
import { wholeNumber } from './sections.js';

/**
 * `verification`: check a new pull secret's credentials against the registries it names before it
 * is promoted (docs/verification.md). Set in the config file only.
 */
export const verificationSectionSchema = z
  .object({
    mode: z.enum(['off', 'warn', 'enforce'], { message: 'must be off, warn or enforce' }).default('off'),
    /** Registries checked (`auths` keys or `host[:port]`); `*` = every one. Others are reported skipped. */
    registries: z
      .array(
        z.string().refine((r) => r === '*' || isValidRegistryKey(r), {
          message: 'must be a registry host[:port], an auths key, or *',
        }),
      )
      .default([]),
    caFile: z.string().min(1).optional(),
    timeoutMs: wholeNumber(100, 120_000).default(10_000),
    perRegistryPerMinute: wholeNumber(1, 100_000).default(60),
    cacheSeconds: wholeNumber(0, 86_400).default(300),
  })
  .strict();

export type VerificationSection = z.output<typeof verificationSectionSchema>;

/** Checks against other sections, one line per problem. */
export function verificationProblems(config: {
  verification: VerificationSection;
  execution: { mode: string };
}): string[] {
  const { verification } = config;
  if (verification.mode === 'off') return [];
  const problems: string[] = [];
  if (verification.registries.length === 0)
    problems.push(
      `verification.registries: must list at least one registry (or "*") when verification.mode is ` +
        `${verification.mode}`,
    );
  return problems;
}
