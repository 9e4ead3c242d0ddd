export {
  createHyperFleetClient,
  type HyperFleetClient,
  type HyperFleetClientOptions,
  type CallOptions,
  type PutStatusOutcome,
} from './client.js';
export { HyperFleetApiError, ROUTE_NOT_FOUND_CODE } from './errors.js';
export { API_BASE_PATH, normalizeBaseUrl } from './base-url.js';
export * from './types.js';
