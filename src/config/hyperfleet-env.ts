import { HYPERFLEET_BROKER_ENV } from './hyperfleet-broker.js';

/** The HyperFleet adapter framework's variables we honour: name → our config path. */
export const HYPERFLEET_ENV: Readonly<Record<string, string>> = {
  HYPERFLEET_API_BASE_URL: 'hyperfleetApi.baseUrl',
  HYPERFLEET_BROKER_TOPIC: 'broker.topic',
  HYPERFLEET_BROKER_SUBSCRIPTION_ID: 'broker.subscriptionId',
};

/** Every HyperFleet-convention variable the adapter reads (for docs and `--help`). */
export function hyperfleetVariables(): string[] {
  return [
    'BROKER_CONFIG_FILE',
    ...Object.keys(HYPERFLEET_BROKER_ENV),
    ...Object.keys(HYPERFLEET_ENV),
    'HYPERFLEET_API_VERSION',
  ];
}
