export {
  startHyperFleetApiStandIn,
  type HyperFleetApiStandIn,
  type HyperFleetApiStandInOptions,
} from './server.js';
export type { FaultSpec } from './faults.js';
export type { CallRecord } from './calls.js';
export type { RouteName } from './routes.js';
export type { PutStatusResult } from './store.js';
export type { DiscardReason } from './status-rules.js';
export { ProblemError } from './problem.js';
export { loadContract, CONTRACT_PATH, type Contract } from './contract.js';
export { successfulConditionType } from './conditions.js';
