import { parse } from '@marcbachmann/cel-js';
import { z } from 'zod';
import { PullSecretError } from '../errors/index.js';
import type { ClusterParams } from './cluster-params.js';
import type { PullSecretSourceKind } from '../config/account-service.js';

/** One precondition: a CEL expression that must evaluate to `true`. */
export const preconditionSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be a lowercase name (letters, digits, -)'),
    expression: z.string().min(1),
    /** Shown in the status when the precondition is not met. */
    message: z.string().min(1),
  })
  .strict();

export type Precondition = z.infer<typeof preconditionSchema>;

const adapterAvailable = (type: string, adapter: string): Precondition => ({
  name: `${adapter}-available`,
  expression: `"${type}" in conditions && conditions["${type}"] == "True"`,
  message: `the ${adapter} adapter has not succeeded yet (${type} is not True)`,
});

/** The `pull-secret-data` rule, its message naming the source that lacks the data. */
function pullSecretData(source: PullSecretSourceKind): Precondition {
  const spec = 'the cluster spec has no pull secret data';
  const message =
    source === 'spec' ? spec : 'the account-service pull secret source cannot serve this cluster';
  return { name: 'pull-secret-data', expression: 'params.hasPullSecret', message };
}

/** The rules every provider shares: pull secret data (from `source`), and validation/dns/placement done. */
export function sharedPreconditions(source: PullSecretSourceKind = 'spec'): Precondition[] {
  return [
    pullSecretData(source),
    adapterAvailable('ValidationSuccessful', 'validation'),
    adapterAvailable('DnsSuccessful', 'dns'),
    adapterAvailable('PlacementSuccessful', 'placement'),
  ];
}

/** The defaults of a single-store GCP adapter (no `providers`): GCP provider, a project id, then the shared ones. */
export function defaultPreconditions(source: PullSecretSourceKind = 'spec'): Precondition[] {
  return [
    {
      name: 'gcp-provider',
      expression: 'params.provider == "gcp"',
      message: 'the cluster provider is not gcp',
    },
    {
      name: 'project-id',
      expression: 'params.projectId != ""',
      message: 'the cluster spec has no GCP project id',
    },
    ...sharedPreconditions(source),
  ];
}

/** The shared rules for `pullSecretSource: spec` (the default). */
export const SHARED_PRECONDITIONS: readonly Precondition[] = sharedPreconditions('spec');

/** The default rules (no `providers`) for `pullSecretSource: spec` (the default). */
export const DEFAULT_PRECONDITIONS: readonly Precondition[] = defaultPreconditions('spec');

/** The verdict on a cluster. */
export type PreconditionVerdict = { met: true } | { met: false; name: string; message: string };

type Compiled = { precondition: Precondition; evaluate: (context: Record<string, unknown>) => unknown };

/**
 * Compiled preconditions. Expressions see `cluster` (the whole object), `spec`, `params`
 * (`provider`, `projectId`, `hasPullSecret` from the configured field paths, and the provider's
 * store settings read from the cluster, `""` when absent: `params.region`) and `conditions`
 * (cluster condition type → status string).
 */
export class Preconditions {
  private readonly compiled: Compiled[];

  /** @throws CONFIG_INVALID naming the precondition whose expression does not parse. */
  constructor(preconditions: readonly Precondition[]) {
    this.compiled = preconditions.map((precondition) => {
      try {
        return { precondition, evaluate: parse(precondition.expression) as Compiled['evaluate'] };
      } catch (err) {
        throw new PullSecretError(
          'CONFIG_INVALID',
          `precondition ${precondition.name}: the CEL expression does not parse: ${firstLine(err)}`,
          { cause: err },
        );
      }
    });
  }

  /**
   * Evaluates every precondition in order and stops at the first one not met.
   * @throws PRECONDITION_ERROR when an expression fails to evaluate or does not yield a boolean
   *   (a broken rule is a failure, not a skip).
   */
  evaluate(
    cluster: { spec?: unknown; status?: { conditions?: Array<{ type: string; status: string }> } },
    params: ClusterParams,
    settings: Readonly<Record<string, string>> = {},
  ): PreconditionVerdict {
    const conditions: Record<string, string> = {};
    for (const c of cluster.status?.conditions ?? []) conditions[c.type] = c.status;
    const context = {
      cluster,
      spec: cluster.spec ?? {},
      conditions,
      params: {
        provider: params.provider,
        projectId: params.projectId,
        ...settings,
        hasPullSecret: params.pullSecret !== undefined,
      },
    };
    for (const { precondition, evaluate } of this.compiled) {
      let value: unknown;
      try {
        value = evaluate(context);
      } catch (err) {
        throw new PullSecretError(
          'PRECONDITION_ERROR',
          `precondition ${precondition.name} could not be evaluated: ${firstLine(err)}`,
          { cause: err },
        );
      }
      if (typeof value !== 'boolean') {
        throw new PullSecretError(
          'PRECONDITION_ERROR',
          `precondition ${precondition.name} did not evaluate to a boolean`,
        );
      }
      if (!value) return { met: false, name: precondition.name, message: precondition.message };
    }
    return { met: true };
  }
}

/** The first line of a CEL error (the rest draws the expression with a caret). */
function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : 'unknown error';
  return (message.split('\n')[0] ?? '').slice(0, 200);
}
