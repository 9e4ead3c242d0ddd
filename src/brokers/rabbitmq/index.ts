export { RabbitMqBroker } from './rabbitmq-broker.js';
export { rabbitMqBrokerConfigSchema, type RabbitMqBrokerConfig } from './config.js';
export { topologyNames, type RabbitMqTopology } from './topology.js';
