import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

/** Sends `signal` to a whole process group (children spawned with `detached: true`); ignores a gone group. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs `cleanUp` if this test process exits or is interrupted before the test's own `after` hook
 * did: servers in their own process groups would not get the terminal's signal and would outlive
 * the run. Returns the function that removes the hooks (call it once cleaned up normally).
 */
export function cleanUpOnExit(cleanUp: () => void): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    unhook();
    cleanUp();
    process.kill(process.pid, signal);
  };
  const unhook = (): void => {
    process.removeListener('exit', cleanUp);
    for (const signal of SIGNALS) process.removeListener(signal, onSignal);
  };
  process.once('exit', cleanUp);
  for (const signal of SIGNALS) process.once(signal, onSignal);
  return unhook;
}
