import { hostname } from 'node:os';
import { z } from 'zod';
import { durationMsSchema } from '../util/duration.js';
import type { LeaseSettings } from './leader-election.js';

const duration = durationMsSchema('must be a duration such as 15s or 2s');
const dnsName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS-1123 name (lowercase letters, digits, - and .)');

/**
 * The adapter's `leaderElection` section (docs/configuration.md): which Lease the replicas elect
 * their leader on, and client-go's timing defaults (15 s lease, 10 s renew deadline, 2 s retry;
 * https://pkg.go.dev/k8s.io/client-go/tools/leaderelection). `enabled` unset: on with
 * `kubernetes.target: api`, off otherwise (one process leads alone).
 */
export const leaderElectionSectionSchema = z
  .object({
    enabled: z.boolean().optional(),
    name: dnsName.default('pullsecret-adapter'),
    /** Default: `POD_NAMESPACE` (the downward API), else `hyperfleet-system`. */
    namespace: dnsName.optional(),
    /** Default: `POD_NAME`, else the host name (a pod's host name is its name). */
    identity: z.string().min(1).max(128).optional(),
    leaseDuration: duration.default(15_000),
    renewDeadline: duration.default(10_000),
    retryPeriod: duration.default(2_000),
  })
  .strict()
  .prefault({});

type LeaderElectionSection = z.output<typeof leaderElectionSectionSchema>;

/** The section's cross-field rules, as client-go checks them (`NewLeaderElector`): one line per problem. */
export function leaderElectionProblems(config: {
  leaderElection: LeaderElectionSection;
  kubernetes: { target: string };
}): string[] {
  const { enabled, leaseDuration, renewDeadline, retryPeriod } = config.leaderElection;
  const problems: string[] = [];
  if (enabled === true && config.kubernetes.target !== 'api')
    problems.push('leaderElection.enabled needs kubernetes.target: api (the Lease is a Kubernetes object)');
  if (leaseDuration <= renewDeadline)
    problems.push('leaderElection.leaseDuration must be longer than leaderElection.renewDeadline');
  if (renewDeadline <= retryPeriod * 1.2)
    problems.push('leaderElection.renewDeadline must be longer than 1.2 × leaderElection.retryPeriod');
  if (retryPeriod < 100) problems.push('leaderElection.retryPeriod must be at least 100ms');
  return problems;
}

/** True when the replicas elect a leader on a Lease (see the section's `enabled`). */
export function leaderElectionEnabled(config: {
  leaderElection: LeaderElectionSection;
  kubernetes: { target: string };
}): boolean {
  return config.leaderElection.enabled ?? config.kubernetes.target === 'api';
}

/** The Lease settings of this replica: the section, then `POD_NAMESPACE` / `POD_NAME`, then defaults. */
export function leaseSettings(section: LeaderElectionSection, env: NodeJS.ProcessEnv): LeaseSettings {
  return {
    name: section.name,
    namespace: section.namespace ?? (env.POD_NAMESPACE || 'hyperfleet-system'),
    identity: section.identity ?? (env.POD_NAME || hostname()),
    leaseDurationMs: section.leaseDuration,
    renewDeadlineMs: section.renewDeadline,
    retryPeriodMs: section.retryPeriod,
  };
}
