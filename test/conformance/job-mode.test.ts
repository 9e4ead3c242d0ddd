import { conformanceSuite } from './cases.js';

// The conformance cases in Job mode: the Kubernetes API test server runs each Job's pod as the real
// `pull-secret run-job pull-secret`.
conformanceSuite('job');
