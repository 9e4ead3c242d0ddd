import { status } from '@grpc/grpc-js';
import { RpcError } from './types.js';

/**
 * List pagination: `page_size` 0 means "server decides", larger sizes are capped, and a page token
 * is opaque and only valid for the request (parent + filter) it was issued for.
 */

/** The service caps list pages at 25000 entries. */
export const MAX_PAGE_SIZE = 25_000;

export interface Page<T> {
  items: T[];
  /** Empty on the last page, as on the wire. */
  nextPageToken: string;
  totalSize: number;
}

interface TokenBody {
  offset: number;
  request: string;
}

/**
 * Cuts one page out of `all`. `request.key` identifies the query (e.g. parent and filter) so a
 * token from another query is refused. The server may return fewer entries than asked for
 * (`maxPageSize`), as the real one may; clients must follow `next_page_token`. @throws INVALID_ARGUMENT for a negative size or a foreign token.
 */
export function paginate<T>(
  all: T[],
  request: { pageSize: number | undefined; pageToken: string | undefined; key: string },
  limits: { defaultPageSize: number; maxPageSize: number },
): Page<T> {
  const { pageToken, key } = request;
  const size = request.pageSize ?? 0;
  if (size < 0) throw new RpcError(status.INVALID_ARGUMENT, 'page_size must not be negative.');
  const effective = Math.min(size === 0 ? limits.defaultPageSize : size, limits.maxPageSize, MAX_PAGE_SIZE);
  let offset = 0;
  if (pageToken !== undefined && pageToken !== '') {
    let body: Partial<TokenBody> | undefined;
    try {
      body = JSON.parse(Buffer.from(pageToken, 'base64url').toString('utf8')) as Partial<TokenBody>;
    } catch {
      body = undefined;
    }
    if (body?.request !== key || typeof body.offset !== 'number' || body.offset < 0) {
      throw new RpcError(status.INVALID_ARGUMENT, 'Invalid page_token: it does not belong to this request.');
    }
    offset = body.offset;
  }
  const items = all.slice(offset, offset + effective);
  const next = offset + effective;
  const nextPageToken =
    next < all.length
      ? Buffer.from(JSON.stringify({ offset: next, request: key } satisfies TokenBody)).toString('base64url')
      : '';
  return { items, nextPageToken, totalSize: all.length };
}
