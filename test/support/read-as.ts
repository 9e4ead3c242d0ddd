import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** HyperFleet's status-reporter image runs as the distroless `nonroot` user. */
export const STATUS_REPORTER_UID = 65532;

/** Whether this process may start a child as another UID (tests run as root here). */
export const CAN_SWITCH_UID = process.getuid?.() === 0;

/**
 * Reads `path` in a child process running as `uid` (and gid `uid`), as a sidecar of another user
 * would: the file's text, or `ERROR <code>` (e.g. `ERROR EACCES`) when it cannot.
 */
export async function readAs(uid: number, path: string): Promise<string> {
  const script =
    'try { process.stdout.write(require("fs").readFileSync(process.argv[1], "utf8")) } catch (e) { process.stdout.write("ERROR " + e.code) }';
  return (await promisify(execFile)(process.execPath, ['-e', script, path], { uid, gid: uid, env: {} }))
    .stdout;
}
