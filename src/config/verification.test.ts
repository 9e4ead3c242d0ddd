import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateAdapterConfig } from './adapter.js';

const base = { hyperfleetApi: { baseUrl: 'http://127.0.0.1:9' }, broker: { type: 'embedded' } };

test('verification is off by default, with the documented defaults', () => {
  const { verification } = validateAdapterConfig(base);
  assert.deepEqual(verification, { mode: 'off', registries: [], timeoutMs: 10_000, perRegistryPerMinute: 60, cacheSeconds: 300 });
});

test('warn/enforce need an allow-list and in-process execution; bad values are named', () => {
  assert.throws(() => validateAdapterConfig({ ...base, verification: { mode: 'enforce' } }), /verification\.registries: must list at least one registry/);
  assert.throws(() => validateAdapterConfig({ ...base, execution: { mode: 'job' }, verification: { mode: 'warn', registries: ['*'] } }), /registry verification runs in the adapter process only/);
  assert.throws(() => validateAdapterConfig({ ...base, verification: { mode: 'strict' } }), /verification\.mode: must be off, warn or enforce/);
  assert.throws(() => validateAdapterConfig({ ...base, verification: { mode: 'warn', registries: ['not a host'] } }), /verification\.registries/);
  assert.throws(() => validateAdapterConfig({ ...base, verification: { timeoutMs: 5 } }), /verification\.timeoutMs/);
  const ok = validateAdapterConfig({ ...base, verification: { mode: 'enforce', registries: ['quay.io', 'registry.example.com:5000'], cacheSeconds: 0 } });
  assert.equal(ok.verification.mode, 'enforce');
});
