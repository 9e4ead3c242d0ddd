import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAzureError, isDisabledAnswer, MAX_RETRY_AFTER_MS, retryAfterMs } from './errors.js';

/** The shape `@azure/keyvault-secrets` rejects with (a RestError with the deserialized body in `details`). */
function restError(
  statusCode: number | undefined,
  body: { code?: string; message?: string; inner?: string } = {},
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) {
  return Object.assign(new Error(body.message ?? 'failed'), {
    name: 'RestError',
    statusCode,
    code: body.code,
    details: {
      error: {
        code: body.code,
        message: body.message,
        innerError: body.inner === undefined ? undefined : { code: body.inner },
      },
    },
    response: { headers: { get: (name: string) => headers[name.toLowerCase()] } },
    ...extra,
  });
}

const target = { method: 'GetSecret' as const, resource: 'https://v.vault.azure.net/secrets/s' };

test('statuses: 429 and 5xx retryable, 401/403/400 permanent, 404 not found, 409 conflict', () => {
  const cases: Array<[number, string, boolean]> = [
    [429, 'STORE_QUOTA_EXCEEDED', true],
    [500, 'STORE_UNAVAILABLE', true],
    [503, 'STORE_UNAVAILABLE', true],
    [408, 'STORE_UNAVAILABLE', true],
    [401, 'STORE_UNAUTHENTICATED', false],
    [403, 'STORE_PERMISSION_DENIED', false],
    [400, 'STORE_INVALID_REQUEST', false],
    [404, 'SECRET_NOT_FOUND', false],
    [409, 'STORE_CONFLICT', true],
  ];
  for (const [status, code, retryable] of cases) {
    const err = classifyAzureError(restError(status, { code: 'X', message: 'server text' }), target);
    assert.deepEqual([err.code, err.retryable], [code, retryable], String(status));
  }
});

test("429 carries the server's Retry-After (seconds or a date), bounded", () => {
  assert.equal(classifyAzureError(restError(429, {}, { 'retry-after': '7' }), target).retryAfterMs, 7000);
  assert.equal(
    classifyAzureError(restError(429, {}, { 'retry-after': '86400' }), target).retryAfterMs,
    MAX_RETRY_AFTER_MS,
  );
  assert.equal(classifyAzureError(restError(429), target).retryAfterMs, undefined);
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(
    retryAfterMs(restError(429, {}, { 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now),
    5000,
  );
  assert.equal(retryAfterMs(restError(429, {}, { 'retry-after': 'whenever' })), undefined);
});

test('socket failures are retryable; credential failures permanent; anything else STORE_FAILED', () => {
  assert.equal(
    classifyAzureError(
      restError(
        undefined,
        { message: 'connect ECONNREFUSED 127.0.0.1:1' },
        {},
        { code: 'REQUEST_SEND_ERROR' },
      ),
      target,
    ).code,
    'STORE_UNAVAILABLE',
  );
  assert.equal(
    classifyAzureError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), target).code,
    'STORE_UNAVAILABLE',
  );
  const credential = classifyAzureError(
    Object.assign(new Error('no'), { name: 'CredentialUnavailableError' }),
    target,
  );
  assert.deepEqual([credential.code, credential.retryable], ['STORE_UNAUTHENTICATED', false]);
  assert.equal(classifyAzureError(new TypeError('bug'), target).code, 'STORE_FAILED');
  // The token endpoint's status is not the vault's: a refused assertion (400) is a credential problem, a 503 transient.
  const refused = classifyAzureError(
    Object.assign(new Error('AADSTS700213'), { name: 'AuthenticationError', statusCode: 400 }),
    target,
  );
  assert.deepEqual([refused.code, refused.retryable], ['STORE_UNAUTHENTICATED', false]);
  const down = classifyAzureError(
    Object.assign(new Error('down'), { name: 'AuthenticationError', statusCode: 503 }),
    target,
  );
  assert.deepEqual([down.code, down.retryable], ['STORE_UNAVAILABLE', true]);
});

test('a disabled version is told apart from a refused caller; SetSecret never repeats server text', () => {
  assert.equal(
    isDisabledAnswer(
      restError(403, {
        code: 'Forbidden',
        message: 'Operation get is not allowed on a disabled secret.',
        inner: 'SecretDisabled',
      }),
    ),
    true,
  );
  assert.equal(
    isDisabledAnswer(
      restError(403, { code: 'Forbidden', message: 'Caller is not authorized.', inner: 'ForbiddenByRbac' }),
    ),
    false,
  );
  const set = classifyAzureError(
    restError(400, { code: 'BadParameter', message: 'value {"auths":...} rejected' }),
    { method: 'SetSecret', resource: 'r' },
  );
  assert.doesNotMatch(set.message, /auths/);
  const get = classifyAzureError(
    restError(403, { code: 'Forbidden', message: 'Caller is not authorized.\r\nforged line' }),
    target,
  );
  assert.match(get.message, /403 Forbidden \(Caller is not authorized\. forged line\)/);
});

test('identity refusals keep their AADSTS code, with advice that matches it; no code means no credential', () => {
  const aggregate = (message: string) =>
    Object.assign(new Error('ChainedTokenCredential authentication failed.'), {
      name: 'AggregateAuthenticationError',
      errors: [
        Object.assign(new Error('EnvironmentCredential is unavailable.'), {
          name: 'CredentialUnavailableError',
        }),
        Object.assign(new Error(message), { name: 'AuthenticationRequiredError' }),
      ],
    });
  const cases: Array<[string, RegExp]> = [
    [
      'invalid_client: Error(s): 70021 - Description: AADSTS70021: No matching federated identity record found for presented assertion.',
      /\(AADSTS70021\): the managed identity exists, but none of its federated/,
    ],
    [
      'invalid_client: Description: AADSTS700213: No matching federated identity record found for presented assertion subject.',
      /\(AADSTS700213\): the managed identity exists/,
    ],
    [
      "unauthorized_client: AADSTS700016: Application with identifier 'x' was not found",
      /\(AADSTS700016\): no application or managed identity with the client id/,
    ],
    [
      'invalid_client: AADSTS700024: Client assertion is not within its valid time range.',
      /\(AADSTS700024\): the federated token/,
    ],
    [
      'invalid_request: AADSTS50011: something else',
      /\(AADSTS50011\): see https:\/\/login\.microsoftonline\.com\/error\?code=50011/,
    ],
  ];
  for (const [message, expected] of cases) {
    const error = classifyAzureError(aggregate(message), target);
    assert.deepEqual([error.code, error.retryable], ['STORE_UNAUTHENTICATED', false], message);
    assert.match(error.message, expected);
    assert.doesNotMatch(error.message, /enable workload identity/);
  }
  const none = classifyAzureError(
    Object.assign(new Error('no credential'), { name: 'CredentialUnavailableError' }),
    target,
  );
  assert.match(
    none.message,
    /no usable Azure credentials \(CredentialUnavailableError\)\. On AKS enable workload identity/,
  );
});

test('a TLS trust failure, of the vault or inside a credential error, is CONFIG_INVALID naming the CA file', () => {
  const direct = restError(undefined, {
    code: 'SELF_SIGNED_CERT_IN_CHAIN',
    message: 'self-signed certificate in certificate chain',
  });
  const wrapped = Object.assign(new Error('ChainedTokenCredential authentication failed.'), {
    name: 'AggregateAuthenticationError',
    errors: [
      Object.assign(new Error('request failed: unable to verify the first certificate'), {
        name: 'AuthenticationError',
      }),
    ],
  });
  for (const err of [direct, wrapped]) {
    const error = classifyAzureError(err, target);
    assert.deepEqual([error.code, error.retryable], ['CONFIG_INVALID', false]);
    assert.match(error.message, /TLS trust failure .*set AZURE_KEY_VAULT_CA_FILE/);
  }
});
