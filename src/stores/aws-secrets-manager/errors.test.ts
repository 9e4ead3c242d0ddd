import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../../errors/index.js';
import { classifyAwsError, isMarkedForDeletion } from './errors.js';

const target = {
  method: 'GetSecretValue' as const,
  resource: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hyperfleet-x-pull-secret',
};

/** An error shaped as the SDK throws it for a service answer. */
function serviceError(name: string, message: string, status = 400): Error {
  return Object.assign(new Error(message), {
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

test('each AWS error name gets its code and retryability', () => {
  const cases: Array<[Error, string, boolean]> = [
    [serviceError('ThrottlingException', 'Rate exceeded'), 'STORE_QUOTA_EXCEEDED', true],
    [serviceError('TooManyRequestsException', 'slow down', 429), 'STORE_QUOTA_EXCEEDED', true],
    [serviceError('InternalServiceError', 'boom', 500), 'STORE_INTERNAL', true],
    [serviceError('SomethingNew', 'bad gateway', 502), 'STORE_INTERNAL', true],
    [serviceError('ServiceUnavailable', 'later', 503), 'STORE_UNAVAILABLE', true],
    [serviceError('AccessDeniedException', 'no'), 'STORE_PERMISSION_DENIED', false],
    [serviceError('DecryptionFailure', 'kms'), 'STORE_PERMISSION_DENIED', false],
    [serviceError('UnrecognizedClientException', 'bad token'), 'STORE_UNAUTHENTICATED', false],
    [serviceError('ExpiredTokenException', 'expired'), 'STORE_UNAUTHENTICATED', false],
    [
      Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
      'STORE_UNAUTHENTICATED',
      false,
    ],
    [serviceError('ResourceNotFoundException', 'gone'), 'SECRET_NOT_FOUND', false],
    [serviceError('InvalidParameterException', 'bad'), 'STORE_INVALID_REQUEST', false],
    [serviceError('ValidationException', 'bad'), 'STORE_INVALID_REQUEST', false],
    [serviceError('LimitExceededException', 'too many'), 'STORE_FAILED', false],
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      'STORE_UNAVAILABLE',
      true,
    ],
    [Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }), 'STORE_TIMEOUT', true],
  ];
  for (const [err, code, retryable] of cases) {
    const classified = classifyAwsError(err, target);
    assert.ok(classified instanceof PullSecretError);
    assert.deepEqual([classified.code, classified.retryable], [code, retryable], err.name);
    assert.ok(
      classified.message.startsWith(`AWS Secrets Manager GetSecretValue failed for ${target.resource}: `),
      classified.message,
    );
  }
});

test('server text is trimmed to one bounded line, and never repeated for PutSecretValue', () => {
  const long = classifyAwsError(
    serviceError('AccessDeniedException', `line one\nforged {"level":"info"} ${'x'.repeat(500)}`),
    target,
  );
  assert.ok(!long.message.includes('\n'));
  assert.match(long.message, /\(line one forged .*…\)/);
  const put = classifyAwsError(
    serviceError('ValidationException', 'value {"auths":{"quay.io":{"auth":"c2VjcmV0"}}} too long'),
    { ...target, method: 'PutSecretValue' },
  );
  assert.ok(!put.message.includes('c2VjcmV0'));
  assert.match(
    put.message,
    /PutSecretValue failed for .*: ValidationException\. The request was rejected as invalid/,
  );
});

test('the refusal of a secret scheduled for deletion is recognised', () => {
  assert.ok(
    isMarkedForDeletion(
      serviceError(
        'InvalidRequestException',
        "You can't perform this operation on the secret because it was marked for deletion.",
      ),
    ),
  );
  assert.ok(
    isMarkedForDeletion(
      serviceError(
        'InvalidRequestException',
        "You can't create this secret because a secret with this name is already scheduled for deletion.",
      ),
    ),
  );
  assert.ok(!isMarkedForDeletion(serviceError('InvalidRequestException', 'other')));
  assert.ok(!isMarkedForDeletion(serviceError('InvalidParameterException', 'marked for deletion')));
});
