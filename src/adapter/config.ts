/**
 * The adapter's configuration. The schema, the layering of file, HyperFleet conventions and
 * environment, and the validation `validate-config` and start-up share live in `src/config/`.
 */
export {
  adapterConfigSchema,
  loadAdapterConfig,
  validateAdapterConfig,
  type AdapterConfig,
} from '../config/adapter.js';
