export { PubSubBroker } from './pubsub-broker.js';
export { pubSubBrokerConfigSchema, deadLetterTopicId, type PubSubBrokerConfig } from './config.js';
