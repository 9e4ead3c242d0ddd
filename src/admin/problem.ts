import type { ServerResponse } from 'node:http';

/** Problem codes of the admin API (the `code` field of its RFC 9457 bodies). */
type AdminProblemCode =
  | 'ADMIN-AUTH-001'
  | 'ADMIN-RATE-001'
  | 'ADMIN-ID-001'
  | 'ADMIN-REQ-001'
  | 'ADMIN-REQ-002'
  | 'ADMIN-NTF-001'
  | 'ADMIN-NTF-002'
  | 'ADMIN-MTH-001'
  | 'ADMIN-UPS-001'
  | 'ADMIN-INT-001'
  | 'ADMIN-RBK-001';

/** An RFC 9457 problem the admin API answers with. */
export interface AdminProblem {
  status: number;
  code: AdminProblemCode;
  title: string;
  detail: string;
}

/** Writes `problem` as `application/problem+json`, with extra headers (WWW-Authenticate, Retry-After, Allow). */
export function sendProblem(
  res: ServerResponse,
  problem: AdminProblem,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
  });
  res
    .writeHead(problem.status, {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      ...headers,
    })
    .end(body);
}

/** Writes `value` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify(value));
}
