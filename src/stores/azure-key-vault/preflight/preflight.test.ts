import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../../../errors/index.js';
import {
  checkCredentials,
  formatReport,
  runPreflight,
  type PreflightInput,
  type PreflightProbe,
} from './run-preflight.js';

const OID = '11111111-2222-3333-4444-555555555555';
const RID =
  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/myvault';
const input = (env: NodeJS.ProcessEnv = {}): PreflightInput => ({
  vaultUrl: 'https://myvault.vault.azure.net',
  vaultName: 'myvault',
  assignee: OID,
  vaultResourceId: RID,
  env,
  secretId: 'hyperfleet-preflight-probe',
});

function probe(
  get: () => Promise<unknown>,
  list: () => Promise<unknown> = () => Promise.resolve(undefined),
): PreflightProbe & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    accessLatestEnabled: () => (calls.push('GetSecret'), get()),
    describe: () => (calls.push('GetSecretVersions'), list()),
  };
}
const notFound = () => Promise.reject(new PullSecretError('SECRET_NOT_FOUND', 'no such secret'));

test('credentials: workload identity passes; a client secret or nothing warns', () => {
  assert.equal(
    checkCredentials({ AZURE_FEDERATED_TOKEN_FILE: '/t', AZURE_CLIENT_ID: 'c', AZURE_TENANT_ID: 't' }).status,
    'pass',
  );
  assert.equal(checkCredentials({ AZURE_CLIENT_SECRET: 's3cr3t' }).status, 'warn');
  assert.ok(!JSON.stringify(checkCredentials({ AZURE_CLIENT_SECRET: 's3cr3t' })).includes('s3cr3t'));
  assert.deepEqual(checkCredentials({}).fix, ['az login']);
});

test('404 on the probe proves get; the list proves list; writes are warnings with the exact grant', async () => {
  const p = probe(notFound);
  const report = await runPreflight(
    input({ AZURE_FEDERATED_TOKEN_FILE: '/t', AZURE_CLIENT_ID: 'c', AZURE_TENANT_ID: 't' }),
    p,
  );
  assert.deepEqual(p.calls, ['GetSecret', 'GetSecretVersions'], 'two read-only calls');
  assert.equal(report.ok, true);
  assert.deepEqual(
    report.checks.map((c) => `${c.id} ${c.status}`),
    [
      'credentials pass',
      'vault pass',
      'right:secrets/get pass',
      'right:secrets/list pass',
      'right:secrets/set warn',
    ],
  );
  const text = formatReport(report);
  assert.match(
    text,
    new RegExp(
      `fix: az role assignment create --role "Key Vault Secrets Officer" --assignee ${OID} --scope ${RID.replace(/\//g, '\\/')}`,
    ),
  );
  assert.match(
    text,
    /az keyvault set-policy --name myvault --object-id 1{8}-2{4}-3{4}-4{4}-5{12} --secret-permissions get list set delete recover/,
  );
  assert.match(text, /4 passed, 0 failed, 1 warnings, 0 skipped$/);
});

test('Forbidden fails with the grant; an unreachable vault or rejected token fails the vault check', async () => {
  const denied = await runPreflight(
    input(),
    probe(() =>
      Promise.reject(
        new PullSecretError('STORE_PERMISSION_DENIED', 'Azure Key Vault GetSecret failed: 403 Forbidden'),
      ),
    ),
  );
  assert.equal(denied.ok, false);
  const get = denied.checks.find((c) => c.id === 'right:secrets/get');
  assert.equal(get?.status, 'fail');
  assert.match(get?.fix[0] ?? '', /^az role assignment create --role "Key Vault Secrets Officer"/);
  const down = await runPreflight(
    input(),
    probe(() => Promise.reject(new PullSecretError('STORE_UNAVAILABLE', 'ECONNREFUSED'))),
  );
  assert.deepEqual(
    down.checks.map((c) => c.status),
    ['warn', 'fail', 'skip', 'skip', 'skip'],
  );
  const listDenied = await runPreflight(
    input(),
    probe(notFound, () => Promise.reject(new PullSecretError('STORE_PERMISSION_DENIED', 'no list'))),
  );
  assert.equal(listDenied.checks.find((c) => c.id === 'right:secrets/list')?.status, 'fail');
});
