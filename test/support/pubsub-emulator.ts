import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpOnExit, freePort, killGroup } from './process-group.js';

/**
 * The real Google Pub/Sub emulator (Java, shipped with the Google Cloud SDK) on loopback with a random
 * port, for integration tests. It keeps its state in memory; it runs in a temp dir that is removed
 * afterwards.
 */

const EMULATOR = '/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator';
const START_DEADLINE_MS = 30_000;
const STOP_GRACE_MS = 5_000;

export interface PubSubEmulator {
  /** `127.0.0.1:{port}`: the value for PUBSUB_EMULATOR_HOST or the broker's `apiEndpoint`. */
  readonly host: string;
  /** Kills the emulator's process group and removes its temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

async function answers(host: string): Promise<boolean> {
  try {
    // The emulator answers plain HTTP on its gRPC port with "Ok" once it serves.
    const response = await fetch(`http://${host}/`, { signal: AbortSignal.timeout(1_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Starts the emulator and waits (typically 1-3 s) until it answers.
 * @throws when the emulator or Java is missing ("run npm run test:setup"), or it does not start.
 */
export async function startPubSubEmulator(): Promise<PubSubEmulator> {
  if (!existsSync(EMULATOR)) {
    throw new Error(
      `the Pub/Sub emulator is not installed (expected ${EMULATOR}; it comes with the Google Cloud SDK component pubsub-emulator)`,
    );
  }
  if (spawnSync('java', ['-version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error('java is not installed (the Pub/Sub emulator needs it): run npm run test:setup');
  }
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'pull-secret-pubsub-'));
  const logFile = join(dir, 'emulator.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(EMULATOR, [`--host=127.0.0.1`, `--port=${port}`], {
    cwd: dir,
    env: { ...process.env, HOME: dir, JAVA_TOOL_OPTIONS: `-Djava.io.tmpdir=${dir}` },
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the Pub/Sub emulator');
  let dead = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (dead = true));

  const cleanUp = (): void => {
    killGroup(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // Last resort when a test file ends without running its after hook, or the run is interrupted.
  const unhook = cleanUpOnExit(cleanUp);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    killGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    cleanUp();
    unhook();
  };

  const tail = (): string => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
    } catch {
      return '';
    }
  };
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await answers(host))) {
    if (dead || Date.now() > deadline) {
      const why = dead ? 'exited during startup' : `did not answer within ${START_DEADLINE_MS} ms`;
      const output = tail();
      await stop();
      throw new Error(`the Pub/Sub emulator ${why}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { host, stop };
}
