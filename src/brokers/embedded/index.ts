export { EmbeddedBroker } from './embedded-broker.js';
export { embeddedBrokerConfigSchema, type EmbeddedBrokerConfig } from './config.js';
