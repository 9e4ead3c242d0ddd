import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

/** `file:///x/chunk.js:12:345` or `/x/chunk.js:12:345` at the end of a stack frame line. */
const FRAME_LOCATION = /((?:file:\/\/)?\/[^\s()]+\.m?js):(\d+):(\d+)\)?\s*$/;

/**
 * The file a stack frame's code was written in, when the frame is in a bundled file (the job's
 * bundles, dist/bundle): the source map beside the file says which module the line came from
 * (`.../node_modules/google-gax/build/src/grpc.js`). Undefined when the frame names no file or the
 * file has no usable map. Reads the map on every call: meant for the rare stray error only.
 */
export function originalSourceOf(frame: string): string | undefined {
  const [, location, line, column] = FRAME_LOCATION.exec(frame) ?? [];
  if (location === undefined || line === undefined || column === undefined) return undefined;
  try {
    const file = location.startsWith('file://') ? fileURLToPath(location) : location;
    const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    return 'originalSource' in entry ? entry.originalSource : undefined;
  } catch {
    return undefined;
  }
}
