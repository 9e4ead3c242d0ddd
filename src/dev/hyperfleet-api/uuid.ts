import { randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * A lowercase UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, variant 10, random rest. Ids made
 * within one millisecond carry a 12-bit counter in `rand_a` so they still sort in creation order.
 */
export function uuidv7(now: number = Date.now()): string {
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
  } else {
    lastMs = now;
    sequence = randomBytes(2).readUInt16BE(0) & 0x7ff;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Lowercase UUIDv7 syntax. */
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
