/*
 * The registry verification plug-in (docs/verification.md). Registers one reconcile step,
 * `verificationStep` (`beforeWrite`: check a new pull secret's registries; enforce mode refuses
 * before any write), wired by the adapter and the Job in one line each.
 */
export { VerificationGate, verificationStep } from './gate.js';
export {
  RegistryVerifier,
  readCa,
  VERIFICATION_OUTCOMES,
  type RegistryResult,
  type VerificationOutcome,
  type VerificationReport,
  type VerifierSettings,
} from './verifier.js';
export { VERIFICATION_MODES, problemsOf, type VerificationMode, type VerificationSummary } from './policy.js';
export { checkLogin, type LoginResult } from './login.js';
export { registryCredentials, registryHost } from './credentials.js';
