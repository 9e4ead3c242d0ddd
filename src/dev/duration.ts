const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration such as `500ms`, `2s`, `1.5m`, `30m`, `1h` into milliseconds; a bare number is
 * seconds. Returns undefined for anything else (negative, empty, unknown unit).
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return undefined;
  const ms = Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1_000);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Milliseconds as the shortest readable duration: `500ms`, `10s`, `1.5m`, `30m`, `2h`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${+(ms / 1_000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)}m`;
  return `${+(ms / 3_600_000).toFixed(1)}h`;
}
