import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deadLetterTopicId } from './config.js';
import { classifyPubSubError, grpcCode, Status } from './errors.js';

describe('Pub/Sub errors', () => {
  it('classifies refused requests as CONFIG_INVALID and the rest as BROKER_UNAVAILABLE', () => {
    for (const code of [
      Status.INVALID_ARGUMENT,
      Status.NOT_FOUND,
      Status.PERMISSION_DENIED,
      Status.FAILED_PRECONDITION,
      Status.UNAUTHENTICATED,
    ]) {
      assert.equal(
        classifyPubSubError(Object.assign(new Error('x'), { code }), 'reading topic "t"').code,
        'CONFIG_INVALID',
      );
    }
    const unavailable = classifyPubSubError(
      Object.assign(new Error('x'), { code: Status.UNAVAILABLE }),
      'streaming messages',
    );
    assert.equal(unavailable.code, 'BROKER_UNAVAILABLE');
    assert.match(unavailable.message, /gRPC status 14/);
    assert.equal(classifyPubSubError(new Error('socket'), 'publishing').code, 'BROKER_UNAVAILABLE');
  });

  it('reads gRPC codes only when numeric', () => {
    assert.equal(grpcCode({ code: Status.NOT_FOUND }), 5);
    assert.equal(grpcCode({ code: 'ENOTFOUND' }), undefined);
    assert.equal(grpcCode(undefined), undefined);
  });

  it('names the dead-letter topic after the subscription', () => {
    assert.equal(deadLetterTopicId('pullsecret-adapter'), 'pullsecret-adapter-dlq');
  });
});
