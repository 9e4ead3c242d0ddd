import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AwsError } from './errors.js';
import { verifySigV4, type TestCredential } from './sigv4.js';
import { SecretsManagerState } from './state.js';
import { answerSts, isStsRequest } from './sts.js';

/** The operations the server implements (`X-Amz-Target: secretsmanager.<Op>`). */
export const OPERATIONS = [
  'CreateSecret',
  'DescribeSecret',
  'GetSecretValue',
  'PutSecretValue',
  'UpdateSecretVersionStage',
  'ListSecretVersionIds',
  'DeleteSecret',
  'RestoreSecret',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Operations that change state (a fault with `afterApply` applies them before failing). */
export const WRITES: ReadonlySet<Operation> = new Set([
  'CreateSecret',
  'PutSecretValue',
  'UpdateSecretVersionStage',
  'DeleteSecret',
  'RestoreSecret',
]);

/** The default test credentials (account 123456789012). */
export const TEST_CREDENTIALS: TestCredential = {
  accessKeyId: 'AKIATESTPULLSECRET01',
  secretAccessKey: 'test-secret-access-key-0000000000000000',
  accountId: '123456789012',
};

/**
 * A fault for the next `times` calls of an operation: an AWS error answer (`type`, `status`), a
 * connection reset (`reset`: the answer is lost on the wire), or a delay. With `afterApply` the
 * operation is applied first, so only its answer is lost.
 */
export interface AwsFaultSpec {
  operation: Operation | '*';
  type?: string;
  message?: string;
  status?: number;
  reset?: boolean;
  afterApply?: boolean;
  delayMs?: number;
  times?: number;
}

/** One call as the server saw it (never the payload). */
export interface AwsCallRecord {
  operation: string;
  secretId: string;
  /** `OK`, the error's `__type`, or `RESET`. */
  code: string;
  accessKeyId: string;
}

export interface AwsSecretsManagerTestServerOptions {
  region?: string;
  /** Access keys the server accepts; default `[TEST_CREDENTIALS]`. */
  credentials?: TestCredential[];
}

/** A running Secrets Manager test server on 127.0.0.1. */
export interface AwsSecretsManagerTestServer {
  /** `http://127.0.0.1:PORT`, for `AWS_SECRETS_ENDPOINT`. */
  readonly endpoint: string;
  readonly region: string;
  readonly state: SecretsManagerState;
  /** Calls per operation since start or `resetCalls`, faulted ones included. */
  readonly calls: Readonly<Record<Operation, number>>;
  readonly totalCalls: number;
  /** Calls of the operations that write. */
  readonly writeCalls: number;
  readonly callLog: readonly AwsCallRecord[];
  /** STS GetCallerIdentity calls (not in `calls`, `totalCalls` or `callLog`: those are Secrets Manager's). */
  readonly stsCalls: number;
  resetCalls(): void;
  injectFault(spec: AwsFaultSpec): void;
  clearFaults(): void;
  /**
   * Restricts what the callers may do: calls of other operations answer AccessDeniedException
   * (as IAM does). `undefined` allows everything.
   */
  setAllowedOperations(operations: readonly Operation[] | undefined): void;
  stop(): Promise<void>;
}

const JSON_11 = 'application/x-amz-json-1.1';

function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': JSON_11,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    ...(errorType === undefined
      ? {}
      : {
          'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazonaws.secretsmanager/`,
        }),
  });
  res.end(text);
}

function sendError(res: ServerResponse, error: AwsError): void {
  send(
    res,
    error.status,
    { __type: `com.amazonaws.secretsmanager#${error.type}`, message: error.message },
    error.type,
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Starts a protocol-faithful AWS Secrets Manager server (JSON 1.1 over plain HTTP) on 127.0.0.1 with
 * a random port: SigV4 verified against the test credentials, the service's rules (names, tags,
 * size, staging labels, ClientRequestToken, recovery window), AWS error bodies, faults, call counts.
 */
export async function startAwsSecretsManagerTestServer(
  options: AwsSecretsManagerTestServerOptions = {},
): Promise<AwsSecretsManagerTestServer> {
  const region = options.region ?? 'us-east-1';
  const credentials = options.credentials ?? [TEST_CREDENTIALS];
  const state = new SecretsManagerState(region);
  const calls = Object.fromEntries(OPERATIONS.map((o) => [o, 0])) as Record<Operation, number>;
  const callLog: AwsCallRecord[] = [];
  let faults: Array<{ spec: AwsFaultSpec; remaining: number }> = [];
  let allowed: ReadonlySet<string> | undefined;
  const sockets = new Set<Socket>();

  const handlers: Record<Operation, (accountId: string, input: Record<string, unknown>) => unknown> = {
    CreateSecret: (a, i) => state.createSecret(a, i),
    DescribeSecret: (a, i) => state.describeSecret(a, i),
    GetSecretValue: (a, i) => state.getSecretValue(a, i),
    PutSecretValue: (a, i) => state.putSecretValue(a, i),
    UpdateSecretVersionStage: (a, i) => state.updateSecretVersionStage(a, i),
    ListSecretVersionIds: (a, i) => state.listSecretVersionIds(a, i),
    DeleteSecret: (a, i) => state.deleteSecret(a, i),
    RestoreSecret: (a, i) => state.restoreSecret(a, i),
  };

  const takeFault = (operation: Operation): AwsFaultSpec | undefined => {
    const entry = faults.find(
      (f) => f.remaining > 0 && (f.spec.operation === operation || f.spec.operation === '*'),
    );
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    faults = faults.filter((f) => f.remaining > 0);
    return entry.spec;
  };

  let stsCalls = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    if (req.method === 'POST' && isStsRequest(req.headers)) {
      stsCalls += 1;
      const answer = answerSts({ headers: req.headers, body }, credentials, region);
      res.writeHead(answer.status, { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() });
      res.end(answer.body);
      return;
    }
    const target = req.headers['x-amz-target'];
    const operation =
      typeof target === 'string' && target.startsWith('secretsmanager.')
        ? target.slice('secretsmanager.'.length)
        : '';
    const log = (secretId: string, code: string, accessKeyId: string) =>
      callLog.push({ operation, secretId, code, accessKeyId });
    if (req.method !== 'POST' || (req.url ?? '/') !== '/')
      return sendError(res, new AwsError('UnknownOperationException', 'Only POST / is served.', 404));
    if (!(OPERATIONS as readonly string[]).includes(operation))
      return sendError(res, new AwsError('UnknownOperationException', `Unknown operation ${String(target)}`));
    const op = operation as Operation;
    calls[op] += 1;
    let input: Record<string, unknown> = {};
    let accessKeyId = '';
    try {
      const credential = verifySigV4(
        { method: 'POST', path: '/', headers: req.headers, body },
        credentials,
        region,
      );
      accessKeyId = credential.accessKeyId;
      if (!String(req.headers['content-type'] ?? '').startsWith(JSON_11))
        throw new AwsError('SerializationException', `Content-Type must be ${JSON_11}`);
      const parsed: unknown = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new AwsError('SerializationException', 'The request body must be a JSON object.');
      input = parsed as Record<string, unknown>;
      const secretId =
        typeof input.SecretId === 'string'
          ? input.SecretId
          : typeof input.Name === 'string'
            ? input.Name
            : '';
      if (allowed !== undefined && !allowed.has(op)) {
        throw new AwsError(
          'AccessDeniedException',
          `User: arn:aws:sts::${credential.accountId}:assumed-role/pullsecret-adapter/test is not authorized to perform: secretsmanager:${op} on resource: ${secretId} because no identity-based policy allows the secretsmanager:${op} action`,
        );
      }
      const fault = takeFault(op);
      if (fault?.delayMs !== undefined) await sleep(fault.delayMs);
      const failing = fault !== undefined && (fault.type !== undefined || fault.reset === true);
      const result =
        failing && fault.afterApply !== true ? undefined : handlers[op](credential.accountId, input);
      if (failing) {
        if (fault.reset === true) {
          log(secretId, 'RESET', accessKeyId);
          req.socket.destroy();
          return;
        }
        throw new AwsError(
          fault.type ?? 'InternalServiceError',
          fault.message ?? defaultMessage(fault.type ?? ''),
          fault.status ?? defaultStatus(fault.type ?? ''),
        );
      }
      log(secretId, 'OK', accessKeyId);
      send(res, 200, result);
    } catch (err) {
      const error =
        err instanceof AwsError
          ? err
          : err instanceof SyntaxError
            ? new AwsError('SerializationException', 'Malformed JSON body.')
            : new AwsError('InternalServiceError', 'An error occurred on the server side.', 500);
      log(
        typeof input.SecretId === 'string'
          ? input.SecretId
          : typeof input.Name === 'string'
            ? input.Name
            : '',
        error.type,
        accessKeyId,
      );
      sendError(res, error);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent)
        sendError(res, new AwsError('InternalServiceError', 'An error occurred on the server side.', 500));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let stopped = false;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    state,
    calls,
    get totalCalls() {
      return Object.values(calls).reduce((a, b) => a + b, 0);
    },
    get writeCalls() {
      return OPERATIONS.filter((o) => WRITES.has(o)).reduce((sum, o) => sum + calls[o], 0);
    },
    callLog,
    get stsCalls() {
      return stsCalls;
    },
    resetCalls() {
      for (const o of OPERATIONS) calls[o] = 0;
      callLog.length = 0;
      stsCalls = 0;
    },
    injectFault(spec) {
      faults.push({ spec, remaining: spec.times ?? 1 });
    },
    clearFaults() {
      faults = [];
    },
    setAllowedOperations(operations) {
      allowed = operations === undefined ? undefined : new Set(operations);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function defaultStatus(type: string): number {
  if (type === 'InternalServiceError') return 500;
  if (type === 'ServiceUnavailable') return 503;
  return 400;
}

function defaultMessage(type: string): string {
  switch (type) {
    case 'ThrottlingException':
      return 'Rate exceeded';
    case 'ServiceUnavailable':
      return 'Service Unavailable';
    case 'AccessDeniedException':
      return 'User is not authorized to perform this action';
    default:
      return 'An error occurred on the server side.';
  }
}
