import type { VerificationSection } from '../config/verification.js';
import type { Metrics } from '../observability/metrics.js';
import { VerificationGate } from './gate.js';
import { RegistryVerifier } from './verifier.js';

/**
 * The adapter's verification gate from its `verification` section; undefined when `mode` is off.
 * Results feed `pullsecret_registry_verifications_total{registry,outcome}`.
 * @throws CONFIG_INVALID when `caFile` cannot be read.
 */
export function createVerificationGate(
  section: VerificationSection,
  metrics: Metrics,
): VerificationGate | undefined {
  if (section.mode === 'off') return undefined;
  const verifier = new RegistryVerifier(section, {
    onResult: (registry, outcome) => metrics.registryVerifications.inc({ registry, outcome }),
  });
  return new VerificationGate(section.mode, verifier);
}
