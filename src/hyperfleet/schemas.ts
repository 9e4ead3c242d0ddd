import { z } from 'zod';
import {
  MANDATORY_CONDITIONS,
  type AdapterStatus,
  type AdapterStatusList,
  type AdapterStatusReport,
  type Cluster,
  type ClusterList,
} from './types.js';

/**
 * Minimal checks of what the HyperFleet API answers: the fields this service relies on have the
 * contract's types. Unknown fields are dropped (a newer API may add some), never rejected.
 */

const timestamp = z.iso.datetime({ offset: true });
const generation = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);

const resourceCondition = z.object({
  type: z.string().min(1),
  status: z.enum(['True', 'False']),
  reason: z.string().optional(),
  message: z.string().optional(),
  observed_generation: z.number().int(),
  created_time: timestamp,
  last_updated_time: timestamp,
  last_transition_time: timestamp,
});

export const clusterSchema = z.object({
  id: z.string().min(1),
  kind: z.string(),
  href: z.string().optional(),
  name: z.string(),
  generation,
  labels: z
    .record(z.string(), z.string())
    .optional()
    .transform((labels) => labels ?? {}),
  spec: z.record(z.string(), z.unknown()),
  status: z.object({ conditions: z.array(resourceCondition) }),
  created_time: timestamp,
  updated_time: timestamp,
  created_by: z.string().optional(),
  updated_by: z.string().optional(),
  deleted_time: timestamp.optional(),
  deleted_by: z.string().optional(),
}) satisfies z.ZodType<Cluster, unknown>;

/** One page of a list answer, with the contract's pagination fields. */
function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    page: z.number().int(),
    size: z.number().int(),
    total: z.number().int(),
    items: z.array(item),
  });
}

export const clusterListSchema = pageOf(clusterSchema) satisfies z.ZodType<ClusterList, unknown>;

const conditionRequest = z.object({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
});

const adapterStatusSchema = z.object({
  adapter: z.string(),
  observed_generation: z.number().int(),
  conditions: z.array(conditionRequest.extend({ last_transition_time: timestamp })),
  data: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  created_time: timestamp,
  last_report_time: timestamp,
}) satisfies z.ZodType<AdapterStatus, unknown>;

export const adapterStatusListSchema = pageOf(adapterStatusSchema) satisfies z.ZodType<
  AdapterStatusList,
  unknown
>;

/**
 * A report is checked before it is sent, so a bug on our side fails here with a precise message
 * instead of as a 400 from the API. Time-window rules are the server's and are not repeated.
 */
export const adapterStatusReportSchema = z
  .object({
    adapter: z.string().min(1),
    observed_generation: generation,
    observed_time: timestamp,
    conditions: z.array(conditionRequest),
    data: z.record(z.string(), z.unknown()).optional(),
    metadata: z
      .object({
        job_name: z.string().optional(),
        job_namespace: z.string().optional(),
        attempt: z.number().int().optional(),
        started_time: timestamp.optional(),
        completed_time: timestamp.optional(),
        duration: z.string().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((report, ctx) => {
    const types = report.conditions.map((c) => c.type);
    for (const required of MANDATORY_CONDITIONS) {
      if (!types.includes(required)) {
        ctx.addIssue({
          code: 'custom',
          path: ['conditions'],
          message: `mandatory condition ${required} is missing`,
        });
      }
    }
    const duplicate = types.find((t, i) => types.indexOf(t) !== i);
    if (duplicate !== undefined)
      ctx.addIssue({ code: 'custom', path: ['conditions'], message: `condition ${duplicate} appears twice` });
  }) satisfies z.ZodType<AdapterStatusReport, unknown>;

/** One line per issue, `path: message`, at most `limit` of them: for error messages. */
export function describeIssues(error: z.ZodError, limit = 5): string {
  const lines = error.issues
    .slice(0, limit)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  if (error.issues.length > limit) lines.push(`and ${error.issues.length - limit} more`);
  return lines.join('; ');
}
