import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEnv } from '../../config/env.js';
import { selectStoreKind } from '../registry.js';
import { azureStoreConfigSchema, azureStoreEnv, normalizeVaultUrl } from './config.js';

const fromEnv = (env: Record<string, string | undefined>) =>
  parseEnv(azureStoreConfigSchema, azureStoreEnv, env);

test('a vault URL alone gives the defaults, normalized', () => {
  assert.deepEqual(fromEnv({ AZURE_KEY_VAULT_URL: 'https://My-Vault1.vault.azure.net/' }), {
    ok: true,
    value: { vaultUrl: 'https://my-vault1.vault.azure.net', callTimeoutMs: 30_000, recoverPollMs: 2_000 },
  });
  const missing = fromEnv({});
  assert.deepEqual(!missing.ok && missing.missing, ['AZURE_KEY_VAULT_URL']);
});

test('vault URLs: Key Vault in the public and sovereign clouds, or a loopback host; nothing else, never echoed', () => {
  for (const good of [
    'https://abc.vault.azure.net',
    'https://a-b-c.vault.azure.cn',
    'https://gov-vault.vault.usgovcloudapi.net/',
    'https://127.0.0.1:8443',
    'https://localhost:1',
    'https://[::1]:9',
  ]) {
    assert.notEqual(normalizeVaultUrl(good), undefined, good);
  }
  const bad = [
    'http://abc.vault.azure.net',
    'https://ab.vault.azure.net',
    'https://a--b.vault.azure.net',
    'https://abc-.vault.azure.net',
    'https://1abc.vault.azure.net',
    `https://${'a'.repeat(25)}.vault.azure.net`,
    'https://abc.vault.azure.net:8443',
    'https://abc.vault.azure.net/secrets/x',
    'https://abc.vault.azure.net?x=1',
    'https://user:tok3n-SECRET@abc.vault.azure.net',
    'https://abc.vault.azure.net.evil.com',
    'https://vault.azure.net',
    'https://10.0.0.1:443',
    'abc.vault.azure.net',
  ];
  for (const value of bad) {
    const result = fromEnv({ AZURE_KEY_VAULT_URL: value });
    assert.equal(result.ok, false, value);
    const message = result.ok ? '' : result.invalid.join('\n');
    assert.match(
      message,
      /^invalid environment variable AZURE_KEY_VAULT_URL: must be the vault URL https:\/\/NAME\.vault\.azure\.net/,
    );
    assert.ok(!message.includes('tok3n-SECRET') && !message.includes('evil'), value);
  }
});

test('timeouts are bounded whole milliseconds', () => {
  assert.equal(
    fromEnv({ AZURE_KEY_VAULT_URL: 'https://abc.vault.azure.net', AZURE_KEY_VAULT_CALL_TIMEOUT_MS: '1500' })
      .ok,
    true,
  );
  for (const bad of ['0', '1.5', 'soon', '600001']) {
    const result = fromEnv({
      AZURE_KEY_VAULT_URL: 'https://abc.vault.azure.net',
      AZURE_KEY_VAULT_CALL_TIMEOUT_MS: bad,
    });
    assert.match(
      result.ok ? '' : (result.invalid[0] ?? ''),
      /AZURE_KEY_VAULT_CALL_TIMEOUT_MS: must be a whole number of milliseconds/,
      bad,
    );
  }
});

test('only AZURE_KEY_VAULT_URL selects the store: the identity variables AKS sets everywhere do not', () => {
  assert.equal(selectStoreKind({ AZURE_KEY_VAULT_URL: 'https://abc.vault.azure.net' }), 'azure');
  assert.equal(
    selectStoreKind({ AZURE_CLIENT_ID: 'x', AZURE_TENANT_ID: 'y', AZURE_FEDERATED_TOKEN_FILE: '/t' }),
    'local',
  );
  assert.equal(selectStoreKind({ AZURE_CLIENT_ID: 'x', GCP_PROJECT_ID: 'my-project' }), 'gcp');
  assert.throws(
    () => selectStoreKind({ AZURE_KEY_VAULT_URL: 'https://abc.vault.azure.net', SECRET_STORE: 'gcp' }),
    /gcp contradicts AZURE_KEY_VAULT_URL/,
  );
});
