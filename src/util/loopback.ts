import { isIP } from 'node:net';

/**
 * True for `localhost`, `127.0.0.0/8` and `::1` (bare or in brackets): hosts a plaintext connection
 * never leaves, so plain HTTP or plaintext gRPC may be allowed there.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  // The URL parser normalizes IPv6 spellings such as `0:0:0:0:0:0:0:1` to `[::1]`.
  if (isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname === '[::1]';
  return false;
}
