import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseChallenges } from './challenge.js';

test('parses Basic and Bearer challenges with quoted and bare parameters', () => {
  assert.deepEqual(parseChallenges('Basic realm="Registry Realm"'), [
    { scheme: 'basic', params: { realm: 'Registry Realm' } },
  ]);
  assert.deepEqual(
    parseChallenges(
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
    ),
    [
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.example/token',
          service: 'registry.example',
          scope: 'repository:a/b:pull',
        },
      },
    ],
  );
  assert.deepEqual(parseChallenges('Basic realm=x, Bearer realm="https://t/", service=s'), [
    { scheme: 'basic', params: { realm: 'x' } },
    { scheme: 'bearer', params: { realm: 'https://t/', service: 's' } },
  ]);
});

test('unparsable or missing headers give what could be read, never throw', () => {
  assert.deepEqual(parseChallenges(undefined), []);
  assert.deepEqual(parseChallenges(''), []);
  assert.deepEqual(parseChallenges('"junk'), []);
  assert.deepEqual(parseChallenges('Bearer'), [{ scheme: 'bearer', params: {} }]);
  assert.deepEqual(parseChallenges('Bearer realm="a\\"b"'), [{ scheme: 'bearer', params: { realm: 'a"b' } }]);
});
