import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { clusterPath, normalizeBaseUrl } from './base-url.js';

function isCode(code: string) {
  return (err: unknown) => err instanceof PullSecretError && err.code === code;
}

describe('base URL', () => {
  it('appends /api/hyperfleet/v1 unless it is already there', () => {
    assert.equal(normalizeBaseUrl('http://127.0.0.1:8000'), 'http://127.0.0.1:8000/api/hyperfleet/v1');
    assert.equal(normalizeBaseUrl('http://127.0.0.1:8000/'), 'http://127.0.0.1:8000/api/hyperfleet/v1');
    assert.equal(
      normalizeBaseUrl('https://h.example/api/hyperfleet/v1/'),
      'https://h.example/api/hyperfleet/v1',
    );
    assert.equal(
      normalizeBaseUrl('https://h.example/gateway'),
      'https://h.example/gateway/api/hyperfleet/v1',
    );
  });

  it('refuses other schemes, embedded credentials, queries and junk', () => {
    for (const bad of [
      'ftp://h.example',
      'https://user:pw@h.example',
      'https://h.example/?x=1',
      'https://h.example/#f',
      'not a url',
    ]) {
      assert.throws(() => normalizeBaseUrl(bad), isCode('CONFIG_INVALID'), bad);
    }
  });
});

describe('cluster paths', () => {
  it('encodes a valid id', () => {
    assert.equal(
      clusterPath('019466a0-8f8e-7abc-9def-0123456789ab', '/statuses'),
      '/clusters/019466a0-8f8e-7abc-9def-0123456789ab/statuses',
    );
  });

  it('refuses ids that could change the route, before any request', () => {
    for (const hostile of [
      '..',
      '../clusters',
      'a/b',
      '%2e%2e',
      'x?y=1',
      'x#y',
      '',
      'UPPER',
      ' x',
      'x'.repeat(64),
    ]) {
      assert.throws(() => clusterPath(hostile), isCode('IDENTIFIER_INVALID'), hostile);
    }
  });
});
