import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boundText,
  describeProblem,
  errorForStatus,
  parseProblem,
  parseRetryAfter,
  ROUTE_NOT_FOUND_CODE,
} from './errors.js';

const ctx = {
  operation: 'GET /clusters/{id}',
  baseUrl: 'https://api.example.com/api/hyperfleet/v1',
  tokenFile: '/var/run/token',
};

describe('problem details', () => {
  it('reads RFC 9457 fields and ignores what is not problem-shaped', () => {
    assert.equal(parseProblem('oops'), undefined);
    assert.equal(parseProblem([1]), undefined);
    assert.equal(parseProblem({ foo: 1 }), undefined);
    const problem = parseProblem({
      title: 'Validation Failed',
      status: 400,
      code: 'HYPERFLEET-VAL-000',
      errors: [{ field: 'name', message: 'bad' }, { nope: 1 }],
    });
    assert.deepEqual(problem, {
      type: 'about:blank',
      title: 'Validation Failed',
      status: 400,
      detail: undefined,
      code: 'HYPERFLEET-VAL-000',
      errors: [{ field: 'name', message: 'bad' }],
    });
  });

  it('bounds server text and strips control characters, so a server cannot flood or forge log lines', () => {
    assert.equal(boundText('a\nb\u0000c\u2028d', 100), 'a b c d');
    assert.equal(boundText('x'.repeat(20), 5), 'xxxxx…');
    const many = Array.from({ length: 9 }, (_, i) => ({ field: `f${i}`, message: 'm'.repeat(500) }));
    const text = describeProblem({ type: 't', title: 'T'.repeat(1000), status: 400, errors: many });
    assert.ok(text.length < 1200, `got ${text.length} characters`);
    assert.match(text, /and 4 more$/);
  });

  it('parses Retry-After as seconds or a date, capped', () => {
    assert.equal(parseRetryAfter(undefined, 1000), undefined);
    assert.equal(parseRetryAfter('soon', 1000), undefined);
    assert.equal(parseRetryAfter('0', 1000), 0);
    assert.equal(parseRetryAfter('2', 10_000), 2000);
    assert.equal(parseRetryAfter('3600', 30_000), 30_000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 60_000, 5_000), 5_000);
    assert.equal(parseRetryAfter(new Date(0).toUTCString(), 60_000, 5_000), 0);
  });
});

describe('error classification', () => {
  it('HYPERFLEET-NTF-000 is a configuration error, whatever the status', () => {
    const err = errorForStatus(
      404,
      { type: 't', title: 'Endpoint Not Found', status: 404, code: ROUTE_NOT_FOUND_CODE },
      ctx,
    );
    assert.equal(err.code, 'CONFIG_INVALID');
    assert.match(err.message, /the HyperFleet API base URL looks wrong: https:\/\/api\.example\.com/);
  });

  it('401/403 are API_UNAUTHENTICATED and name the token file', () => {
    for (const status of [401, 403]) {
      const err = errorForStatus(status, undefined, ctx);
      assert.equal(err.code, 'API_UNAUTHENTICATED');
      assert.equal(err.retryable, false);
      assert.match(err.message, /\/var\/run\/token/);
    }
    assert.match(
      errorForStatus(401, undefined, { ...ctx, tokenFile: undefined }).message,
      /no token file is configured/,
    );
  });

  it('408, 429 and 5xx are retryable API_UNAVAILABLE', () => {
    for (const status of [408, 429, 500, 502, 503, 504]) {
      const err = errorForStatus(status, undefined, { ...ctx, retryAfterMs: 5 });
      assert.equal(err.code, 'API_UNAVAILABLE', String(status));
      assert.equal(err.retryable, true);
      assert.equal(err.retryAfterMs, 5);
    }
  });

  it('other 4xx are API_REQUEST_INVALID with the problem title, detail and field errors', () => {
    for (const status of [400, 405, 409, 413, 415, 422]) {
      const err = errorForStatus(
        status,
        {
          type: 't',
          title: 'Validation Failed',
          detail: 'Invalid report',
          status,
          code: 'HYPERFLEET-VAL-000',
          errors: [{ field: 'observed_time', message: 'too old' }],
        },
        ctx,
      );
      assert.equal(err.code, 'API_REQUEST_INVALID', String(status));
      assert.equal(err.retryable, false);
      assert.equal(err.httpStatus, status);
      assert.equal(err.problemCode, 'HYPERFLEET-VAL-000');
      assert.match(
        err.message,
        /Validation Failed: Invalid report \(HYPERFLEET-VAL-000\); observed_time: too old/,
      );
    }
  });

  it('a redirect is a configuration error (a bearer token is never sent elsewhere)', () => {
    assert.equal(errorForStatus(302, undefined, ctx).code, 'CONFIG_INVALID');
  });
});
