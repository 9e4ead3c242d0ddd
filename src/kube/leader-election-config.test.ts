import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import {
  leaderElectionEnabled,
  leaderElectionProblems,
  leaderElectionSectionSchema,
  leaseSettings,
} from './leader-election-config.js';

const section = (raw: unknown) => leaderElectionSectionSchema.parse(raw);

describe('leaderElection section', () => {
  it("defaults to client-go's timing, on with the Kubernetes API only", () => {
    const defaults = section(undefined);
    assert.deepEqual(defaults, {
      name: 'pullsecret-adapter',
      leaseDuration: 15_000,
      renewDeadline: 10_000,
      retryPeriod: 2_000,
    });
    assert.equal(leaderElectionEnabled({ leaderElection: defaults, kubernetes: { target: 'api' } }), true);
    assert.equal(
      leaderElectionEnabled({ leaderElection: defaults, kubernetes: { target: 'manifests' } }),
      false,
    );
    const off = section({ enabled: false });
    assert.equal(leaderElectionEnabled({ leaderElection: off, kubernetes: { target: 'api' } }), false);
  });

  it('takes the identity and namespace from the pod (downward API), else the host name and hyperfleet-system', () => {
    const settings = leaseSettings(section({}), { POD_NAME: 'adapter-7c9-x2', POD_NAMESPACE: 'platform' });
    assert.equal(settings.identity, 'adapter-7c9-x2');
    assert.equal(settings.namespace, 'platform');
    const bare = leaseSettings(section({}), {});
    assert.equal(bare.identity, hostname());
    assert.equal(bare.namespace, 'hyperfleet-system');
    const named = leaseSettings(section({ identity: 'me', namespace: 'ns' }), { POD_NAME: 'p' });
    assert.deepEqual([named.identity, named.namespace], ['me', 'ns']);
  });

  it('refuses timings client-go refuses, and enabled without the Kubernetes API', () => {
    const problems = leaderElectionProblems({
      leaderElection: section({
        enabled: true,
        leaseDuration: '10s',
        renewDeadline: '10s',
        retryPeriod: '9s',
      }),
      kubernetes: { target: 'none' },
    });
    assert.deepEqual(problems, [
      'leaderElection.enabled needs kubernetes.target: api (the Lease is a Kubernetes object)',
      'leaderElection.leaseDuration must be longer than leaderElection.renewDeadline',
      'leaderElection.renewDeadline must be longer than 1.2 × leaderElection.retryPeriod',
    ]);
    assert.throws(() => section({ name: 'Not_A_Name' }), /DNS-1123/);
    assert.throws(() => section({ leaseDuration: 'soon' }), /duration/);
  });
});
