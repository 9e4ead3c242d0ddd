import type { ClusterParams } from './cluster-params.js';
import { first } from './cluster-params.js';
import { Preconditions, type Precondition, type PreconditionVerdict } from './preconditions.js';

/** One provider, resolved: everything the adapter needs to serve its clusters. */
export interface ProviderRoute {
  /** The store kind. */
  readonly store: string;
  /** Shared settings of the store (the scope and per-cluster settings come from each cluster). */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly writesPerMinute?: number;
  readonly readsPerMinute?: number;
  readonly accessesPerMinute?: number;
  /** Store setting key → cluster paths (keys with no path are dropped). */
  readonly fieldPaths: Readonly<Record<string, readonly string[]>>;
  /** The provider's own rules. */
  readonly rules: readonly Precondition[];
}

/** Where one cluster's pull secret goes: its provider's route and its store settings. */
export interface ClusterRoute {
  /** The `providers` key that matched (`*` for any provider). */
  readonly provider: string;
  /** The store kind. */
  readonly store: string;
  /** The store settings read from the cluster, non-empty ones only; never a credential. */
  readonly settings: Readonly<Record<string, string>>;
  /** Every mapped setting key, `""` when the cluster gives none (what CEL sees as `params`). */
  readonly params: Readonly<Record<string, string>>;
}

/** The precondition reported for a cluster of a provider no route serves. */
export const UNMAPPED_PROVIDER = 'provider';

/**
 * The adapter's providers at run time: which route serves a cluster, what store settings the
 * cluster gives, and the provider's preconditions (its own rules, then the shared ones), compiled
 * once at start.
 */
export class ProviderRoutes {
  private readonly preconditions = new Map<string, Preconditions>();

  /** @throws CONFIG_INVALID when a rule does not parse (checked before by the config). */
  constructor(
    private readonly routes: Readonly<Record<string, ProviderRoute>>,
    shared: readonly Precondition[],
  ) {
    for (const [name, route] of Object.entries(routes))
      this.preconditions.set(name, new Preconditions([...route.rules, ...shared]));
  }

  /** The provider keys served, for messages. */
  get providers(): string[] {
    return Object.keys(this.routes);
  }

  /** The route of a cluster whose provider field reads `provider`, or undefined when none serves it. */
  route(cluster: unknown, provider: string): ClusterRoute | undefined {
    const key =
      provider !== '' && Object.hasOwn(this.routes, provider)
        ? provider
        : Object.hasOwn(this.routes, '*')
          ? '*'
          : undefined;
    const route = key === undefined ? undefined : this.routes[key];
    if (key === undefined || route === undefined) return undefined;
    const params: Record<string, string> = {};
    for (const [setting, paths] of Object.entries(route.fieldPaths))
      params[setting] = asSetting(first(cluster, paths));
    const settings = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== ''));
    return { provider: key, store: route.store, settings, params };
  }

  /** Why a cluster of `provider` is skipped: no route serves it. */
  unmappedMessage(provider: string): string {
    const served = this.providers.join(', ');
    if (provider === '') return `the cluster names no provider (this adapter serves ${served})`;
    return (
      `the cluster provider ${JSON.stringify(provider.slice(0, 64))} is not served by this adapter ` +
      `(it serves ${served})`
    );
  }

  /**
   * Evaluates the route's preconditions.
   * @throws PRECONDITION_ERROR as `Preconditions.evaluate`.
   */
  evaluate(
    route: ClusterRoute,
    cluster: Parameters<Preconditions['evaluate']>[0],
    params: ClusterParams,
  ): PreconditionVerdict {
    const compiled = this.preconditions.get(route.provider);
    return compiled === undefined ? { met: true } : compiled.evaluate(cluster, params, route.params);
  }
}

/** A setting as text: strings as they are, numbers (an AWS account id written as a number) as digits. */
function asSetting(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}
