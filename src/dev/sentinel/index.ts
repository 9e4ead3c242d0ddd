export { Sentinel, type SentinelOptions, type PollResult, type SentinelStats } from './sentinel.js';
export {
  decide,
  viewOf,
  DEFAULT_SENTINEL_INTERVALS,
  type SentinelIntervals,
  type ClusterView,
  type Decision,
  type PublishReason,
  type PublishRecord,
} from './decision.js';
export { reconcileEventBody, SENTINEL_SOURCE } from './reconcile-event.js';
