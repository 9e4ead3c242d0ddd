import type { Logger } from '../observability/logger.js';
import type { Broker } from './broker.js';
import { parseBrokerConfig, type BrokerConfigInput } from './config.js';

/** What every broker gets besides its settings. */
interface BrokerOptions {
  /** Structured logger; brokers log constant messages with context fields, never a message body. */
  logger?: Logger;
}

/**
 * Validates the settings and builds the chosen broker. Its module (and client library) is imported
 * only now, so a process on the embedded broker never loads amqplib or the Pub/Sub client. No
 * network call happens before `start` / `publish`.
 * @throws PullSecretError CONFIG_INVALID for invalid settings.
 */
export async function createBroker(config: BrokerConfigInput, options: BrokerOptions = {}): Promise<Broker> {
  const parsed = parseBrokerConfig(config);
  switch (parsed.type) {
    case 'embedded': {
      const { EmbeddedBroker } = await import('./embedded/index.js');
      return new EmbeddedBroker(parsed, options);
    }
    case 'rabbitmq': {
      const { RabbitMqBroker } = await import('./rabbitmq/index.js');
      return new RabbitMqBroker(parsed, options);
    }
    case 'pubsub': {
      const { PubSubBroker } = await import('./pubsub/index.js');
      return new PubSubBroker(parsed, options);
    }
  }
}
