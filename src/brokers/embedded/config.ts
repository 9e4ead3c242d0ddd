import { z } from 'zod';

/**
 * Settings of the in-process broker (dev stack, benchmarks). Numbers may come as strings (from the
 * environment); messages describe the rule and never echo the value.
 */
export const embeddedBrokerConfigSchema = z
  .object({
    type: z.literal('embedded'),
    /** Handlers running at once. */
    maxInFlight: z.coerce.number().int().min(1).max(10_000).default(8),
    /** Deliveries of one message before it is dropped (and logged) instead of retried again. */
    maxDeliveries: z.coerce.number().int().min(1).max(1000).default(10),
    /** Delay before the first redelivery after 'retry', in ms; doubled each time, jittered. */
    retryDelayMs: z.coerce.number().int().min(0).max(600_000).default(100),
    /** Upper bound of one redelivery delay, in ms. */
    retryMaxDelayMs: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  })
  .strict();

export type EmbeddedBrokerConfig = z.output<typeof embeddedBrokerConfigSchema>;
