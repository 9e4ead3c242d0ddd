import { ProblemError } from './problem.js';

export interface Page<T> {
  page: number;
  /** The number of items on this page, as the API reports it (not the requested size). */
  size: number;
  total: number;
  items: T[];
}

const ORDER_FIELDS = ['created_time', 'updated_time', 'name', 'generation'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

/** hyperfleet-api pkg/services/types.go `MaxPageSize`: larger pages are refused, not cut down. */
export const MAX_PAGE_SIZE = 100;

/**
 * The list parameters as hyperfleet-api reads them (pkg/services/types.go `NewListArguments`, at the
 * commit that pins hyperfleet-api-spec v1.0.25,
 * https://github.com/openshift-hyperfleet/hyperfleet-api/blob/031482f0ab4196d3b92398a82ef14710782a281b/pkg/services/types.go):
 * `page` ≥ 1 (default 1), `size` 1-100 (default 20), each refused on its own, the first problem only:
 * not an integer is 400 `HYPERFLEET-VAL-003`, out of range 400 `HYPERFLEET-VAL-004`; `order` is
 * `field [asc|desc]`, default **`created_time desc`** (newest first; the contract's `created_time`
 * default is not what the server does). `search` (TSL) is not implemented by the stand-in and is
 * refused rather than ignored, so a test never passes by accident on an unfiltered list.
 *
 * @throws ProblemError (format, range, validation, search)
 */
export function parseListQuery(query: URLSearchParams): {
  page: number;
  size: number;
  order: { field: OrderField; descending: boolean };
} {
  if (query.has('search'))
    throw new ProblemError(
      'search',
      'Failed to parse search query: the HyperFleet API stand-in does not implement search',
    );
  const integer = (name: string, fallback: number, max?: number): number => {
    const raw = (query.get(name) ?? '').trim();
    if (raw === '') return fallback;
    const value = /^[+-]?\d+$/.test(raw) ? Number(raw) : NaN;
    const invalid = `Invalid ${name} parameter`;
    if (!Number.isSafeInteger(value))
      throw new ProblemError('format', `${invalid}: must be a positive integer`);
    if (value < 1) throw new ProblemError('range', `${invalid}: ${value} is less than 1`);
    if (max !== undefined && value > max)
      throw new ProblemError('range', `${invalid}: ${value} exceeds maximum allowed value of ${max}`);
    return value;
  };
  const page = integer('page', 1);
  const size = integer('size', 20, MAX_PAGE_SIZE);
  const order = query.get('order') ?? 'created_time desc';
  const [field = 'created_time', direction = 'asc', ...extra] = order.trim().split(/\s+/);
  const knownField = (ORDER_FIELDS as readonly string[]).includes(field);
  if (!knownField || (direction !== 'asc' && direction !== 'desc') || extra.length > 0) {
    const message = `order must be one of ${ORDER_FIELDS.join(', ')}, optionally followed by asc or desc`;
    throw new ProblemError('validation', 'Invalid list parameters', [
      { field: 'order', constraint: 'enum', message },
    ]);
  }
  return { page, size, order: { field: field as OrderField, descending: direction === 'desc' } };
}

/** The value an item is sorted by for an `order` field, and a unique tie-breaker. */
export interface SortKeys<T> {
  value(item: T, field: OrderField): string | number;
  id(item: T): string;
}

/** Sorts (stable, ties by id) and cuts one page out of `all`. @throws ProblemError like `parseListQuery` */
export function paginate<T>(all: readonly T[], query: URLSearchParams, keys: SortKeys<T>): Page<T> {
  const { page, size, order } = parseListQuery(query);
  const sorted = [...all].sort((a, b) => {
    const x = keys.value(a, order.field);
    const y = keys.value(b, order.field);
    const byField = x < y ? -1 : x > y ? 1 : 0;
    const result = byField !== 0 ? byField : keys.id(a).localeCompare(keys.id(b));
    return order.descending ? -result : result;
  });
  const items = sorted.slice((page - 1) * size, page * size);
  return { page, size: items.length, total: all.length, items };
}
