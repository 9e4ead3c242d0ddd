import { conformanceSuite } from './cases.js';

// The conformance cases with in-process execution and Kubernetes Secrets written as manifests.
conformanceSuite('in-process');
