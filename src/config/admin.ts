import { z } from 'zod';
import { isLoopbackHost } from '../util/loopback.js';

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** A boolean from YAML (`true`) or the environment (`"true"`, `"false"`). */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')], {
  message: 'must be true or false',
});

/**
 * The admin API (docs/admin-api.md): off by default; its own port; TLS from files (plain HTTP is
 * refused unless the host is loopback); tokens in a file or a Kubernetes Secret (exactly one when
 * the API or the metrics protection is on), rotated at half their lifetime.
 */
export const adminSectionSchema = z
  .object({
    enabled: flag.default(false),
    host: z.string().min(1).default('127.0.0.1'),
    port: count(0, 65_535).default(8443),
    tls: z
      .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
      .strict()
      .optional(),
    tokens: z
      .object({
        file: z.string().min(1).optional(),
        secret: z
          .object({ namespace: z.string().min(1), name: z.string().min(1) })
          .strict()
          .optional(),
        lifetimeSeconds: count(60, 90 * 86_400).default(86_400),
        pollSeconds: count(1, 3600).default(10),
      })
      .strict()
      .prefault({}),
    failedAttempts: z
      .object({ max: count(1, 10_000).default(10), windowSeconds: count(1, 86_400).default(60) })
      .strict()
      .prefault({}),
    /** `/metrics` requires the admin token too. */
    protectMetrics: flag.default(false),
  })
  .strict()
  .superRefine((admin, ctx) => {
    const needsTokens = admin.enabled || admin.protectMetrics;
    if (needsTokens && (admin.tokens.file === undefined) === (admin.tokens.secret === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tokens'],
        message:
          'set exactly one of tokens.file (ADMIN_TOKEN_FILE) or tokens.secret ' +
          '(ADMIN_TOKEN_SECRET_NAMESPACE and ADMIN_TOKEN_SECRET_NAME)',
      });
    }
    if (admin.enabled && admin.tls === undefined && !isLoopbackHost(admin.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message:
          `plain HTTP is allowed on a loopback host only (${admin.host} is not): set tls.certFile ` +
          `and tls.keyFile (ADMIN_TLS_CERT_FILE, ADMIN_TLS_KEY_FILE)`,
      });
    }
  });

export type AdminSection = z.output<typeof adminSectionSchema>;
