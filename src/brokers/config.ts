import { z } from 'zod';
import { PullSecretError } from '../errors/index.js';
import { embeddedBrokerConfigSchema } from './embedded/config.js';
import { pubSubBrokerConfigSchema } from './pubsub/config.js';
import { rabbitMqBrokerConfigSchema } from './rabbitmq/config.js';

/**
 * Broker settings: one schema per broker (each in its folder, free of SDK imports), told apart by
 * `type`. Numbers and flags also accept their text form, so values read from the environment parse.
 */
export const brokerConfigSchema = z.discriminatedUnion('type', [
  embeddedBrokerConfigSchema,
  rabbitMqBrokerConfigSchema,
  pubSubBrokerConfigSchema,
]);

/** Parsed broker settings (defaults applied). */
type BrokerConfig = z.output<typeof brokerConfigSchema>;
/** Broker settings as written (defaults optional). */
export type BrokerConfigInput = z.input<typeof brokerConfigSchema>;

/** The broker kinds this build knows; `embedded` is the default. */
const BROKER_KINDS = ['embedded', 'rabbitmq', 'pubsub'] as const satisfies ReadonlyArray<
  BrokerConfig['type']
>;

/**
 * Parses and freezes broker settings. Every problem is listed, one per line, by field path; values
 * are never echoed (a RabbitMQ URL may hold a password).
 * @throws PullSecretError CONFIG_INVALID.
 */
export function parseBrokerConfig(input: unknown): Readonly<BrokerConfig> {
  const parsed = brokerConfigSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : 'type';
      const rule =
        issue.code === 'invalid_union' && path === 'type'
          ? `must be one of ${BROKER_KINDS.join(', ')}`
          : issue.message;
      return `invalid broker setting ${path}: ${rule}`;
    });
    throw new PullSecretError('CONFIG_INVALID', lines.join('\n'));
  }
  return Object.freeze(parsed.data);
}
