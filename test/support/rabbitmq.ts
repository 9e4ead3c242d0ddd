import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpOnExit, freePort, killGroup } from './process-group.js';
import { connect, type ChannelModel } from 'amqplib';

/**
 * A throwaway RabbitMQ node for integration tests: the real `rabbitmq-server` (Debian package) on
 * loopback, with random AMQP, distribution and epmd ports and its own node name, data, log and config
 * under a temp dir, so test files can run their nodes side by side. Nothing of the system install
 * (service, /etc/rabbitmq, /var/lib/rabbitmq) is used.
 */

/** The package's real start script; /usr/sbin/rabbitmq-server re-runs it as user rabbitmq, dropping our environment. */
const SERVER_SCRIPT = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const START_DEADLINE_MS = 45_000;
const STOP_GRACE_MS = 10_000;

export interface RabbitMqServer {
  /** `amqp://guest:guest@127.0.0.1:{port}` (guest may log in over loopback). */
  readonly url: string;
  readonly port: number;
  /** Stops the node and starts it again on the same ports and data dir (durable state survives). */
  restart(): Promise<void>;
  /** Stops the node and its epmd, and removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** A process started in its own process group, its output appended to `logFile`. */
interface GroupProcess {
  readonly pid: number;
  readonly exited: Promise<void>;
  hasExited(): boolean;
}

function spawnGroup(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string },
): GroupProcess {
  const fd = openSync(options.logFile, 'a');
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  let done = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (done = true));
  return { pid: child.pid, exited, hasExited: () => done };
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader exited. */
async function stopGroup(proc: GroupProcess, graceMs: number): Promise<void> {
  killGroup(proc.pid, 'SIGTERM');
  const timer = setTimeout(() => killGroup(proc.pid, 'SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
  killGroup(proc.pid, 'SIGKILL');
}

function acceptsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function acceptsAmqp(url: string): Promise<boolean> {
  try {
    const connection = await connect(url, { timeout: 1_000 });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

async function waitFor(
  what: string,
  ready: () => Promise<boolean>,
  proc: GroupProcess,
  tail: () => string,
): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await ready())) {
    if (proc.hasExited()) throw new Error(`${what} exited during startup:\n${tail()}`);
    if (Date.now() > deadline)
      throw new Error(`${what} was not ready within ${START_DEADLINE_MS} ms:\n${tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts a node and waits (typically 5-8 s) until it accepts AMQP connections.
 * @throws when `rabbitmq-server` is missing ("run npm run test:setup") or the node does not start.
 */
export async function startRabbitMq(): Promise<RabbitMqServer> {
  if (!existsSync(SERVER_SCRIPT)) {
    throw new Error(`rabbitmq-server is not installed (expected ${SERVER_SCRIPT}): run npm run test:setup`);
  }
  const [amqpPort, distPort, epmdPort] = (await distinctFreePorts(3)) as [number, number, number];
  const dir = mkdtempSync(join(tmpdir(), 'pull-secret-rabbitmq-'));
  for (const sub of ['mnesia', 'log', 'home', 'plugins-expand']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'rabbitmq.conf'), 'disk_free_limit.absolute = 1MB\nlog.file.level = warning\n');
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const logFile = join(dir, 'server.log');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: join(dir, 'home'), // the Erlang cookie goes here
    RABBITMQ_NODENAME: `rabbit-${amqpPort}-${process.pid}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
  };
  const url = `amqp://guest:guest@127.0.0.1:${amqpPort}`;
  const tail = (): string => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-25).join('\n');
    } catch {
      return '';
    }
  };

  let epmd: GroupProcess | undefined;
  let node: GroupProcess | undefined;
  let stopped = false;

  const killAll = (): void => {
    for (const proc of [node, epmd]) if (proc !== undefined) killGroup(proc.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // Last resort when a test file ends without running its after hook, or the run is interrupted.
  const unhook = cleanUpOnExit(killAll);

  const startNode = async (): Promise<void> => {
    node = spawnGroup(SERVER_SCRIPT, [], { cwd: dir, env, logFile });
    await waitFor('rabbitmq-server', () => acceptsAmqp(url), node, tail);
  };
  const stopNode = async (): Promise<void> => {
    // SIGTERM makes the node shut down cleanly (about a second), so durable state is flushed.
    if (node !== undefined) await stopGroup(node, STOP_GRACE_MS);
    node = undefined;
  };
  const stopAll = async (): Promise<void> => {
    await stopNode();
    if (epmd !== undefined) await stopGroup(epmd, STOP_GRACE_MS);
    epmd = undefined;
    killAll();
    unhook();
  };

  try {
    // Our own epmd, in the foreground: one the node started would daemonize out of our reach.
    epmd = spawnGroup('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], {
      cwd: dir,
      env,
      logFile,
    });
    await waitFor('epmd', () => acceptsTcp(epmdPort), epmd, tail);
    await startNode();
  } catch (err) {
    await stopAll();
    throw err;
  }

  return {
    url,
    port: amqpPort,
    async restart(): Promise<void> {
      await stopNode();
      await startNode();
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}

/**
 * Whether an exchange or queue exists: a passive declare on a channel of its own, since a miss (404)
 * closes the channel it was asked on.
 */
export async function declared(
  model: ChannelModel,
  kind: 'exchange' | 'queue',
  name: string,
): Promise<boolean> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    await (kind === 'exchange' ? channel.checkExchange(name) : channel.checkQueue(name));
    await channel.close();
    return true;
  } catch {
    return false;
  }
}
