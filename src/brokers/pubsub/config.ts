import { z } from 'zod';

/** Pub/Sub topic and subscription ids: start with a letter, 3-255 of `[A-Za-z0-9-_.~+%]`, not `goog…`. */
const RESOURCE_ID = /^[A-Za-z][A-Za-z0-9\-_.~+%]{2,250}$/;
const RESOURCE_RULE =
  'must be 3-251 letters, digits or "-_.~+%", starting with a letter (and not with "goog")';
/** Project ids, including legacy domain-scoped ones (`example.com:project`). */
const PROJECT_ID = /^[a-z][a-z0-9.:-]{2,99}$/;

const resourceId = z
  .string()
  .regex(RESOURCE_ID, { message: RESOURCE_RULE })
  .refine((id) => !id.toLowerCase().startsWith('goog'), { message: RESOURCE_RULE });

/** Accepts a boolean or its text form ("true"/"false", "1"/"0", "yes"/"no"), as env variables give it. */
const flag = z.union([z.boolean(), z.stringbool()]);

/**
 * Settings of the Google Pub/Sub broker (docs/configuration.md): subscription `subscriptionId` on
 * `topic`, dead-letter topic `{subscriptionId}-dlq`. The emulator is used when `apiEndpoint` or
 * `PUBSUB_EMULATOR_HOST` names a host that is not `*.googleapis.com` (the client library decides).
 */
export const pubSubBrokerConfigSchema = z
  .object({
    type: z.literal('pubsub'),
    /** Defaults to what the client library finds (GOOGLE_CLOUD_PROJECT, credentials, metadata server). */
    projectId: z.string().regex(PROJECT_ID, { message: 'must be a Google Cloud project id' }).optional(),
    topic: resourceId,
    /** Replicas with the same subscription id share its messages (competing consumers). */
    subscriptionId: resourceId,
    /** `host:port` of the API or an emulator; wins over PUBSUB_EMULATOR_HOST. */
    apiEndpoint: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:]+\](:\d{1,5})?$/, {
        message: 'must be host or host:port',
      })
      .optional(),
    /** Create the topic, subscription, dead-letter topic and its subscription when missing. */
    createIfMissing: flag.default(true),
    /** Messages handed to handlers at once (flow control). */
    maxInFlight: z.coerce.number().int().min(1).max(10_000).default(8),
    /**
     * Deliveries before Pub/Sub dead-letters a message (the service allows 5-100), set on a new
     * subscription's dead-letter policy; the same default as the other brokers' `maxDeliveries`.
     */
    maxDeliveryAttempts: z.coerce.number().int().min(5).max(100).default(10),
    /** Subscription ack deadline for a new subscription, in seconds (the library extends leases). */
    ackDeadlineSeconds: z.coerce.number().int().min(10).max(600).default(60),
    /** Redelivery backoff of a new subscription after a nack ('retry'), in seconds (service: 0-600). */
    retryMinBackoffSeconds: z.coerce.number().int().min(0).max(600).default(10),
    retryMaxBackoffSeconds: z.coerce.number().int().min(0).max(600).default(600),
    /** Time limit of one administrative call (topology checks, readiness probes), in ms. */
    requestTimeoutMs: z.coerce.number().int().min(500).max(600_000).default(15_000),
    /** Backoff of readiness probes after a stream error, in ms. */
    reconnectBaseDelayMs: z.coerce.number().int().min(10).max(600_000).default(500),
    reconnectMaxDelayMs: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  })
  .strict()
  .refine((c) => c.retryMinBackoffSeconds <= c.retryMaxBackoffSeconds, {
    message: 'retryMinBackoffSeconds must not exceed retryMaxBackoffSeconds',
    path: ['retryMinBackoffSeconds'],
  });

export type PubSubBrokerConfig = z.output<typeof pubSubBrokerConfigSchema>;

/** Name of the dead-letter topic (and of the subscription that keeps its messages). */
export function deadLetterTopicId(subscriptionId: string): string {
  return `${subscriptionId}-dlq`;
}
