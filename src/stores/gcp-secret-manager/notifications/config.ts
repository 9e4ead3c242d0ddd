import { z } from 'zod';

/** Pub/Sub subscription ids, or full names `projects/P/subscriptions/S`. */
const SUBSCRIPTION =
  /^(projects\/[a-z][a-z0-9.:-]{2,99}\/subscriptions\/)?[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;
const SUBSCRIPTION_RULE =
  'must be a Pub/Sub subscription id (3-255 letters, digits or "-_.~+%", starting with a letter) or ' +
  'projects/PROJECT/subscriptions/ID';

/**
 * The adapter's `notifications` section: consume Secret Manager's event notifications of our secrets
 * from an existing Pub/Sub subscription (docs/architecture.md, "Store notifications"). Off by default.
 */
export const notificationsSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** The subscription on the topic(s) named in the GCP store's `topics`; required when enabled. */
    subscription: z.string().regex(SUBSCRIPTION, { message: SUBSCRIPTION_RULE }).optional(),
    /** Project of the subscription; default what the client library finds. */
    projectId: z
      .string()
      .regex(/^[a-z][a-z0-9.:-]{2,99}$/, { message: 'must be a Google Cloud project id' })
      .optional(),
    /** `host:port` of the Pub/Sub API or an emulator; wins over PUBSUB_EMULATOR_HOST. */
    apiEndpoint: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:]+\](:\d{1,5})?$/, {
        message: 'must be host or host:port',
      })
      .optional(),
    /** Notifications handled at once (flow control). */
    maxInFlight: z.coerce.number().int().min(1).max(1000).default(16),
  })
  .strict()
  .refine((n) => !n.enabled || n.subscription !== undefined, {
    message:
      'notifications.enabled needs notifications.subscription (the Pub/Sub subscription on the store topics)',
    path: ['subscription'],
  });

export type NotificationsConfig = z.output<typeof notificationsSectionSchema>;

/** Cross-section check: notifications come from Secret Manager, so some provider must use the gcp store. */
export function notificationsProblems(
  notifications: NotificationsConfig,
  stores: readonly string[],
): string[] {
  if (!notifications.enabled || stores.includes('gcp')) return [];
  return [
    'notifications.enabled: store notifications come from GCP Secret Manager, but no provider uses the gcp store',
  ];
}
