import type { ValidationError } from '../../hyperfleet/types.js';
import { ProblemError } from './problem.js';

export interface Page<T> {
  page: number;
  /** The number of items on this page, as the API reports it (not the requested size). */
  size: number;
  total: number;
  items: T[];
}

const INT32_MAX = 2 ** 31 - 1;
const ORDER_FIELDS = ['created_time', 'updated_time', 'name', 'generation'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

/**
 * The contract's list parameters: `page` (≥ 1, default 1), `size` (≥ 1, default 20), `order`
 * (`field [asc|desc]`, default `created_time`). `search` (TSL) is not implemented by the stand-in and is
 * refused rather than ignored, so a test never passes by accident on an unfiltered list.
 *
 * @throws ProblemError (validation, search)
 */
export function parseListQuery(query: URLSearchParams): { page: number; size: number; order: { field: OrderField; descending: boolean } } {
  if (query.has('search')) throw new ProblemError('search', 'Failed to parse search query: the HyperFleet API stand-in does not implement search');
  const errors: ValidationError[] = [];
  const integer = (name: string, fallback: number): number => {
    const raw = query.get(name);
    if (raw === null) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < 1 || value > INT32_MAX) {
      errors.push({ field: name, constraint: 'min', message: `${name} must be an integer of at least 1` });
    }
    return value;
  };
  const page = integer('page', 1);
  const size = integer('size', 20);
  const [field = 'created_time', direction = 'asc', ...extra] = (query.get('order') ?? 'created_time').trim().split(/\s+/);
  const knownField = (ORDER_FIELDS as readonly string[]).includes(field);
  if (!knownField || (direction !== 'asc' && direction !== 'desc') || extra.length > 0) {
    errors.push({ field: 'order', constraint: 'enum', message: `order must be one of ${ORDER_FIELDS.join(', ')}, optionally followed by asc or desc` });
  }
  if (errors.length > 0) throw new ProblemError('validation', 'Invalid list parameters', errors);
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
