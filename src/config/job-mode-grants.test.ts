import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { validateAdapterConfig } from '../adapter/config.js';

const base = {
  hyperfleetApi: { baseUrl: 'http://127.0.0.1:1' },
  broker: { type: 'embedded' },
  store: { type: 'local', settings: { dir: '/tmp/x' } },
  kubernetes: { target: 'api' },
  execution: { mode: 'job' },
};
const accountService = { baseUrl: 'https://api.openshift.com' };

describe('Job mode refuses features whose Kubernetes writes its service account lacks', () => {
  for (const [name, extra] of [
    ['ownership transfers (accountService)', { accountService }],
    ['entitlement refreshes', { accountService, entitlements: { enabled: true } }],
  ] as const) {
    it(`refuses ${name} with kubernetes.target api`, () => {
      assert.throws(
        () => validateAdapterConfig({ ...base, ...extra }),
        (err: unknown) =>
          err instanceof PullSecretError &&
          err.code === 'CONFIG_INVALID' &&
          /cannot be used with execution.mode job.*use execution.mode in-process/s.test(err.message),
      );
    });
  }

  it('accepts them in-process, or in Job mode without the Kubernetes Secret', () => {
    validateAdapterConfig({ ...base, accountService, execution: { mode: 'in-process' } });
    validateAdapterConfig({ ...base, accountService, kubernetes: { target: 'none' } });
    validateAdapterConfig(base);
  });
});
