/**
 * CRC-32C (Castagnoli), the checksum Secret Manager uses for `SecretPayload.data_crc32c`.
 * Small enough to own rather than add a dependency; table-driven, one byte at a time.
 */

/** Reflected form of the Castagnoli polynomial 0x1EDC6F41. */
const POLYNOMIAL = 0x82f63b78;

const TABLE = buildTable();

function buildTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32C of `data` as an unsigned 32-bit integer (e.g. `"123456789"` → `0xe3069283`). */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = (TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
