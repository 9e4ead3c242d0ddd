import net from 'node:net';

/**
 * Records every outgoing TCP connection of this process, so a test can assert that a client never
 * left loopback (no metadata-server probe, no call to googleapis.com). It wraps
 * `net.Socket.prototype.connect`, which plain, TLS, HTTP/2 and gRPC connections all go through.
 */
export interface LoopbackGuard {
  /** Hosts connected to that are not loopback. */
  readonly offLoopback: readonly string[];
  /** Every host connected to. */
  readonly hosts: readonly string[];
  /** Restores the original `connect`. */
  uninstall(): void;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function targetHost(args: unknown[]): string {
  const first = args[0];
  if (Array.isArray(first)) return targetHost(first as unknown[]);
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: unknown; path?: unknown };
    if (typeof options.path === 'string') return 'localhost';
    return typeof options.host === 'string' ? options.host : 'localhost';
  }
  if (typeof first === 'string') return 'localhost';
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

/** Starts recording. Call `uninstall()` when done. */
export function installLoopbackGuard(): LoopbackGuard {
  const hosts: string[] = [];
  const offLoopback: string[] = [];
  // The prototype seen as a plain property bag, so `connect` can be wrapped and restored.
  const prototype = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => net.Socket };
  const original = prototype.connect;
  const patched = function (this: net.Socket, ...args: unknown[]): net.Socket {
    const host = targetHost(args);
    hosts.push(host);
    if (!isLoopback(host)) offLoopback.push(host);
    return original.apply(this, args);
  };
  prototype.connect = patched;
  return {
    hosts,
    offLoopback,
    uninstall: () => {
      if (prototype.connect === patched) prototype.connect = original;
    },
  };
}
