import { PullSecretError } from '../../errors/index.js';

/** AMQP reply codes that mean the settings are wrong, not that the broker is down. */
const CONFIG_REPLY_CODES = new Set([
  403, // ACCESS_REFUSED: user lacks permission on the vhost or a resource
  404, // NOT_FOUND
  406, // PRECONDITION_FAILED: an exchange or queue exists with other settings
  530, // NOT_ALLOWED: e.g. the virtual host does not exist
]);

/** The AMQP reply code of a channel or connection error, when it has one. */
export function replyCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number') return code;
  // A refused login ends the handshake with a message such as "403 (ACCESS-REFUSED)" and no code.
  const message = (err as { message?: unknown }).message;
  const match =
    typeof message === 'string' ? /\b(403|530)\b \((ACCESS-REFUSED|NOT-ALLOWED)\)/.exec(message) : null;
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * Turns a failure to connect or declare the topology into a PullSecretError: CONFIG_INVALID when the
 * broker refused the settings (credentials, vhost, conflicting definitions), else BROKER_UNAVAILABLE.
 * `address` is `host:port` (never the URL, which may hold credentials).
 */
export function classifyConnectError(err: unknown, address: string): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const code = replyCode(err);
  if (code === 406) {
    return new PullSecretError(
      'CONFIG_INVALID',
      `RabbitMQ at ${address} refused the topology: an exchange or queue of that name was declared with ` +
        `other settings while the adapter started; start again to use it as it is`,
      { cause: err },
    );
  }
  if (code !== undefined && CONFIG_REPLY_CODES.has(code)) {
    return new PullSecretError(
      'CONFIG_INVALID',
      `RabbitMQ at ${address} refused access (AMQP reply ${code}): check the credentials, virtual host and permissions`,
      {
        cause: err,
      },
    );
  }
  return new PullSecretError('BROKER_UNAVAILABLE', `cannot connect to RabbitMQ at ${address}`, {
    cause: err,
  });
}
