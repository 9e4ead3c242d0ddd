import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateAdapterConfig } from '../adapter/config.js';

const base = { hyperfleetApi: { baseUrl: 'http://127.0.0.1:9' }, broker: { type: 'embedded' } };

test('verification is off by default, with the documented defaults', () => {
  const { verification } = validateAdapterConfig(base);
  assert.deepEqual(verification, {
    mode: 'off',
    registries: [],
    timeoutMs: 10_000,
    perRegistryPerMinute: 60,
    cacheSeconds: 300,
  });
});

test('warn/enforce need an allow-list, in either execution mode; bad values are named', () => {
  assert.throws(
    () => validateAdapterConfig({ ...base, verification: { mode: 'enforce' } }),
    /verification\.registries: must list at least one registry/,
  );
  // Job mode runs the same check in each Job (VERIFICATION_* in its environment).
  assert.equal(
    validateAdapterConfig({
      ...base,
      execution: { mode: 'job', job: { image: 'registry.example/pull-secret:1' } },
      verification: { mode: 'warn', registries: ['*'] },
    }).verification.mode,
    'warn',
  );
  assert.throws(
    () => validateAdapterConfig({ ...base, verification: { mode: 'strict' } }),
    /verification\.mode: must be off, warn or enforce/,
  );
  assert.throws(
    () => validateAdapterConfig({ ...base, verification: { mode: 'warn', registries: ['not a host'] } }),
    /verification\.registries/,
  );
  assert.throws(
    () => validateAdapterConfig({ ...base, verification: { timeoutMs: 5 } }),
    /verification\.timeoutMs/,
  );
  const ok = validateAdapterConfig({
    ...base,
    verification: { mode: 'enforce', registries: ['quay.io', 'registry.example.com:5000'], cacheSeconds: 0 },
  });
  assert.equal(ok.verification.mode, 'enforce');
});
