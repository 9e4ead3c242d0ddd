import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON lines (lines that are not JSON are skipped). */
  logs: Array<Record<string, unknown>>;
}

/** Environment every CLI test starts from: nothing inherited that could reach a real cloud. */
export function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    METADATA_SERVER_DETECTION: 'none',
    GOOGLE_CLOUD_DISABLE_DIRECT_PATH: 'true',
    RETRY_BASE_DELAY_MS: '5',
    RETRY_MAX_DELAY_MS: '20',
    ...extra,
  };
}

/** Runs the `pull-secret` CLI from source (through tsx) and collects its output. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runNode(['--import', 'tsx', MAIN, ...args], env);
}

/**
 * Runs `node ARGS` from the project root (a built entry, a bundle) and collects its output; `user`
 * runs it as another user (test/support/bundle.ts, imageUser).
 */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  user: { uid?: number; gid?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...user,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, logs: parseLines(stdout) }));
  });
}

function parseLines(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** The job's final log line (`operation: completed` or `failed`). */
export function finalLine(result: CliResult): Record<string, unknown> | undefined {
  return result.logs.filter((l) => l.operation === 'completed' || l.operation === 'failed').at(-1);
}
