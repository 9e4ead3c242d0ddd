// The container image, without a Docker engine: a structural lint of the Dockerfile (hadolint is not
// installable here), then what its stages do, on this machine: build (tsc, then the bundles), assemble
// the runtime file layout with the exact command of the build stage (scripts/assemble-image-layout.mjs)
// and run the CLI from that layout alone, the way the image's ENTRYPOINT, the Jobs' `pull-secret`
// command and the upstream chart's `/usr/local/bin/pull-secret` do: no node_modules, as the image's
// user (UID and GID 1000 when the tests run as root, as CI does; the layout is root's, 0755/0644), with
// nothing written but /tmp and the results directory. The dev stack (dist/dev, its dependencies,
// contracts/) stays out: `pull-secret dev` there says so in one line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JOB_DEFAULTS } from '../../src/kube/job-manifest.js';
import { DEFAULT_DEV_DATA_DIR } from '../../src/dev/data-dir.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { imageUser, jsFiles, LAYOUT_APP_DIR } from '../support/bundle.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
/** The most the layout may add to the base image (issue 28). */
const LAYOUT_TARGET_BYTES = 40 * 1024 * 1024;

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  steps: Instruction[];
}

/** Dockerfile → stages of instructions (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op = '', args = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') {
      const [from = '', , name] = args.split(/\s+/);
      stages.push({ from, ...(name === undefined ? {} : { name }), steps: [] });
    } else {
      stages.at(-1)?.steps.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfileText);
const final = stages.at(-1) as Stage;
/** The build stage: the one whose RUN compiles (`npm run build`), and that RUN's commands. */
const buildStage = stages.find((s) =>
  s.steps.some((x) => x.op === 'RUN' && /\bnpm run build\b/.test(x.args)),
);
const buildCommands =
  buildStage?.steps
    .find((x) => x.op === 'RUN' && /\bnpm run build\b/.test(x.args))
    ?.args.split('&&')
    .map((c) => c.trim()) ?? [];
/** The build stage's layout command and the directory it fills. */
const layoutCommand = buildCommands.find((c) => c.startsWith('node scripts/assemble-image-layout.mjs')) ?? '';
const layoutOut = /--out (\S+)/.exec(layoutCommand)?.[1] ?? '';
const finalWorkdir = final.steps.findLast((s) => s.op === 'WORKDIR')?.args ?? '';
const finalEnv = final.steps.find((s) => s.op === 'ENV')?.args ?? '';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  engines: { node: string };
};
/** The executable (package.json "bin"): dist/cli/pull-secret.js, which runs each command from its bundle. */
const EXECUTABLE = pkg.bin['pull-secret'] ?? '';

describe('Dockerfile (structural lint)', () => {
  test('multi-stage on UBI 9 Node.js 22 LTS (the engines field allows it), the runtime on the minimal image, pinned by digest', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    for (const stage of stages)
      assert.match(
        stage.from,
        /^registry\.access\.redhat\.com\/ubi9\/nodejs-22(-minimal)?:[\w.-]+@sha256:[0-9a-f]{64}$/,
        stage.from,
      );
    assert.match(final.from, /^registry\.access\.redhat\.com\/ubi9\/nodejs-22-minimal:/);
    assert.match(pkg.engines.node, /\|\| \^22\.\d+\.\d+$/, 'engines names Node 22');
    assert.equal(
      final.steps.filter((s) => s.op === 'RUN').length,
      0,
      'nothing runs in the runtime stage (no shell, no package manager needed)',
    );
  });

  test('dependencies from the lock file with npm ci, never npm install, nothing fetched outside the package manager', () => {
    assert.doesNotMatch(dockerfileText, /\bnpm (install|i)\b/);
    for (const stage of stages.filter((s) =>
      s.steps.some((x) => x.op === 'RUN' && /\bnpm ci\b/.test(x.args)),
    )) {
      const copyLock = stage.steps.findIndex((x) => x.op === 'COPY' && /package-lock\.json/.test(x.args));
      const install = stage.steps.findIndex((x) => x.op === 'RUN' && /\bnpm ci\b/.test(x.args));
      assert.ok(
        copyLock >= 0 && copyLock < install,
        `${stage.name ?? stage.from}: package-lock.json is copied before npm ci`,
      );
      assert.match(stage.steps[install]?.args ?? '', /--ignore-scripts/);
    }
    assert.doesNotMatch(
      dockerfileText,
      /\b(curl|wget)\b|^ADD\s+https?:/m,
      'nothing fetched outside the package manager',
    );
  });

  test('the runtime stage copies the assembled layout onto / and nothing else: no node_modules, no compiled tree', () => {
    assert.match(layoutCommand, /^node scripts\/assemble-image-layout\.mjs --dist dist --out \/\S+$/);
    const copies = final.steps.filter((s) => s.op === 'COPY');
    assert.deepEqual(
      copies.map((c) => c.args),
      [`--from=${buildStage?.name} ${layoutOut}/ /`],
      'one COPY of the layout, owned by root (no --chown)',
    );
    assert.equal(finalWorkdir, `/${LAYOUT_APP_DIR}`);
  });

  test('runs as UID 1000, exposes 8080 and 9090, health documented for Kubernetes probes', () => {
    const users = final.steps.filter((s) => s.op === 'USER');
    assert.match(users.at(-1)?.args ?? '', /^1000(:1000)?$/);
    assert.equal(final.steps.findLast((s) => s.op === 'EXPOSE')?.args, '8080 9090');
    const healthcheck = final.steps.some((s) => s.op === 'HEALTHCHECK');
    assert.ok(
      healthcheck ||
        /No HEALTHCHECK: Kubernetes probes \/healthz and \/readyz on port 8080/.test(dockerfileText),
    );
  });

  test("the Jobs' command `pull-secret` is on PATH and is the ENTRYPOINT", () => {
    assert.equal(JOB_DEFAULTS.command[0], 'pull-secret');
    assert.match(finalEnv, new RegExp(`PATH=${finalWorkdir}/bin:\\$PATH`));
    assert.equal(final.steps.find((s) => s.op === 'ENTRYPOINT')?.args, '["pull-secret"]');
    assert.equal(EXECUTABLE, 'dist/cli/pull-secret.js');
  });

  test("the image's NODE_OPTIONS are the Job pods' (the job run from the image keeps the small young generation)", () => {
    assert.equal(/\bNODE_OPTIONS=(\S+)/.exec(finalEnv)?.[1], JOB_DEFAULTS.nodeOptions);
  });

  test('every production dependency is imported by production code', () => {
    const production = listTs(join(ROOT, 'src')).filter(
      (f) => !f.endsWith('.test.ts') && !f.includes(`${join('src', 'dev')}/`),
    );
    const text = production.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const dep of Object.keys(pkg.dependencies)) {
      const escaped = dep.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      assert.match(
        text,
        new RegExp(`(from |import\\()'${escaped}(/[^']*)?'`),
        `${dep} is used only outside production code: make it a devDependency`,
      );
    }
  });

  test('.dockerignore lets in only what the Dockerfile copies from the context', () => {
    const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(lines[0], '*', 'deny by default');
    const allowed = lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = stages.flatMap((s) =>
      s.steps
        .filter((x) => x.op === 'COPY' && !x.args.includes('--from='))
        .flatMap((x) => x.args.replace(/--\S+/g, '').trim().split(/\s+/).slice(0, -1)),
    );
    for (const source of copied)
      assert.ok(allowed.includes(source.replace(/\/$/, '')), `${source} is in the build context`);
    for (const secret of ['.pull-secret', 'node_modules', 'dist', '.git', 'test', 'contracts'])
      assert.ok(!allowed.includes(secret), `${secret} stays out`);
  });
});

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` (the executable, a link to it) with `env` only, as the image's user. */
function spawnAs(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  user = imageUser(),
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], ...user });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every path under `dir` with its size and mode: what a run must leave as it found. */
async function snapshot(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const rows = await Promise.all(
    entries.map(
      async (e) =>
        `${relative(dir, join(e.parentPath, e.name))} ${(await stat(join(e.parentPath, e.name))).size}`,
    ),
  );
  return rows.sort();
}

describe("the image's runtime layout, run from the layout alone", { timeout: 5 * 60_000 }, () => {
  let dir = '';
  let layout = '';
  let app = '';
  let results = '';
  let gcp: SecretManagerTestServer;
  /** The image's ENV (Dockerfile), with this machine's node on PATH after the image's bin. */
  let imageEnv: Record<string, string> = {};

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-layout-'));
    const build = join(dir, 'build');
    // The build stage: `npm run build` (tsc, then the bundles), into our own directory so the shared
    // dist/ is left alone; then its layout command, with our directory as --out.
    await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(build, 'dist')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    await run(process.execPath, ['scripts/bundle.mjs', '--dist', join(build, 'dist')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    layout = join(dir, 'layout');
    const [script = '', ...args] = layoutCommand
      .replace(/^node /, '')
      .replace(`--out ${layoutOut}`, `--out ${layout}`)
      .replace('--dist dist', `--dist ${join(build, 'dist')}`)
      .split(/\s+/);
    await run(process.execPath, [script, ...args], { cwd: ROOT });
    app = join(layout, LAYOUT_APP_DIR);
    // The pod's emptyDir on /results: writable by the pod's user (fsGroup 1000 upstream).
    results = join(dir, 'results');
    await mkdir(results);
    const user = imageUser();
    if (user.uid !== undefined) await chown(results, user.uid, user.gid ?? user.uid);
    await chmod(dir, 0o755);
    const env = Object.fromEntries(
      [...finalEnv.matchAll(/(\w+)=(\S+)/g)].map(([, k = '', v = '']) => [k, v]),
    );
    imageEnv = {
      ...env,
      PATH: `${app}/bin:${dirname(process.execPath)}:/usr/bin:/bin`,
      METADATA_SERVER_DETECTION: 'none',
    };
    gcp = await startSecretManagerTestServer({ project: 'image-layout-project' });
  });

  after(async () => {
    await gcp?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  test(`holds the executable, the bundles and package.json: nothing twice, no node_modules, at most ${LAYOUT_TARGET_BYTES / 1024 / 1024} MB`, async () => {
    const top = (await readdir(app)).sort();
    assert.deepEqual(top, ['bin', 'dist', 'package.json']);
    assert.deepEqual((await readdir(join(app, 'dist'))).sort(), ['bundle', 'cli']);
    assert.deepEqual(await readdir(join(app, 'dist', 'cli')), ['pull-secret.js']);
    assert.ok(
      !existsSync(join(app, 'node_modules')) && !existsSync(join(app, 'dist', 'dev')),
      'no node_modules, no dev stack',
    );
    const files = await snapshot(layout);
    const bytes = files.reduce((sum, row) => sum + Number(row.split(' ').at(-1)), 0);
    assert.ok(bytes <= LAYOUT_TARGET_BYTES, `${(bytes / 1024 / 1024).toFixed(1)} MB`);
    // Root's files, readable by all, writable by none but root: 0755 directories and executable, 0644 files.
    for (const entry of await readdir(layout, { recursive: true, withFileTypes: true })) {
      if (entry.isSymbolicLink()) continue;
      const path = join(entry.parentPath, entry.name);
      const mode = (await stat(path)).mode & 0o777;
      const expected = entry.isDirectory() || path.endsWith(join('cli', 'pull-secret.js')) ? 0o755 : 0o644;
      assert.equal(mode.toString(8), expected.toString(8), relative(layout, path));
    }
  });

  test("the upstream chart's Job: /usr/local/bin/pull-secret run-job pull-secret with its exact environment, as UID 1000, writes only the result", async () => {
    // charts/pull-secret/configs/pull-secret-job-adapter-task.yaml of openshift-hyperfleet/adapter-pull-secret:
    // command /usr/local/bin/pull-secret, args run-job pull-secret, these six variables, runAsUser 1000,
    // readOnlyRootFilesystem with emptyDirs on /tmp and /results.
    // https://github.com/openshift-hyperfleet/adapter-pull-secret/blob/main/charts/pull-secret/configs/pull-secret-job-adapter-task.yaml
    const clusterId = '019466a0-8f8e-7abc-9def-0123456789ab';
    const chartEnv = {
      GCP_PROJECT_ID: 'image-layout-project',
      CLUSTER_ID: clusterId,
      SECRET_NAME: `hyperfleet-${clusterId}-pull-secret`,
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      RESULTS_PATH: join(results, 'adapter-result.json'),
      LOG_LEVEL: 'info',
    };
    // Test plumbing only: the Secret Manager test server instead of secretmanager.googleapis.com.
    const env = {
      ...imageEnv,
      ...chartEnv,
      SECRET_MANAGER_ENDPOINT: gcp.address,
      SECRET_MANAGER_INSECURE: 'true',
    };
    const before = await snapshot(layout);
    const outcomes: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const result = await spawnAs(
        join(layout, 'usr', 'local', 'bin', 'pull-secret'),
        ['run-job', 'pull-secret'],
        env,
        app,
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      const last = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
      outcomes.push(last.outcome);
      const written = JSON.parse(await readFile(chartEnv.RESULTS_PATH, 'utf8')) as Record<string, unknown>;
      assert.equal(written.status, 'success');
    }
    assert.deepEqual(outcomes, ['created', 'unchanged']);
    assert.equal(gcp.calls.AddSecretVersion, 1);
    assert.deepEqual(await snapshot(layout), before, 'nothing written in the layout');
  });

  test('every command answers --help from the layout; `dev --help` too, without loading the dev stack', async () => {
    for (const command of [
      'run-job',
      'inspect',
      'adapter',
      'validate-config',
      'status',
      'preflight',
      'dev',
      'store',
      'transfer',
      'admin',
      'token',
      'rollback',
      'verify',
    ]) {
      const result = await spawnAs('pull-secret', [command, '--help'], imageEnv, app);
      assert.equal(result.code, 0, `${command}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^Usage: pull-secret ${command}`), command);
    }
    assert.ok(
      (await spawnAs('pull-secret', ['dev', '--help'], imageEnv, app)).stdout.includes(
        `(default ${DEFAULT_DEV_DATA_DIR})`,
      ),
      "the help names the dev stack's default data directory",
    );
  });

  test('`dev` from the layout: one clear line, exit 2, no stack trace', async () => {
    const result = await spawnAs('pull-secret', ['dev', '--demo', '--exit-when-settled'], imageEnv, app);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^pull-secret: the dev stack is not part of this installation \(dist\/dev\/\S+\.js is missing\): run it from a source checkout after npm ci \(npm start\)\n$/,
    );
  });

  test('`pull-secret --version` runs through the PATH link', async () => {
    const result = await spawnAs('pull-secret', ['--version'], imageEnv, app);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), pkg.version);
  });

  test('`validate-config` accepts the shipped adapter configurations', async () => {
    for (const config of ['deploy/base/adapter.yaml', 'deploy/overlays/job/adapter.yaml']) {
      const result = await spawnAs(
        'pull-secret',
        ['validate-config', '--config', join(ROOT, config)],
        imageEnv,
        app,
      );
      assert.equal(result.code, 0, `${config}: ${result.stderr}`);
      assert.match(result.stdout, /^configuration is valid: broker pubsub, store gcp/);
    }
  });
});

/** The npm registry answers within 15 s. */
async function registryReachable(): Promise<boolean> {
  try {
    await run('npm', ['ping'], { timeout: 15_000 });
    return true;
  } catch {
    return false;
  }
}

describe('a source checkout installed with --omit=dev (not the image)', { timeout: 8 * 60_000 }, () => {
  let dir = '';
  let reachable = false;

  before(async () => {
    reachable = await registryReachable();
    if (!reachable) return;
    dir = await mkdtemp(join(tmpdir(), 'image-install-'));
    await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    for (const file of ['package.json', 'package-lock.json']) await cp(join(ROOT, file), join(dir, file));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      timeout: 6 * 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    await mkdir(join(dir, 'bin'));
    await symlink(`../${EXECUTABLE}`, join(dir, 'bin', 'pull-secret'));
  });

  after(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  test('`dev` names the missing development dependency', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const env = {
      PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: dir,
      NODE_ENV: 'production',
      METADATA_SERVER_DETECTION: 'none',
    };
    const result = await spawnAs(
      process.execPath,
      [join(dir, EXECUTABLE), 'dev', '--demo', '--exit-when-settled'],
      env,
      dir,
      {},
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^pull-secret: the dev stack is not part of this installation \(ajv-formats is missing\)[^\n]*\n$/,
    );
    assert.ok(!existsSync(join(dir, DEFAULT_DEV_DATA_DIR)), 'nothing written');
  });

  test('every compiled module loads with production dependencies alone', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    // main.js, the executable and the bundles' entries run the CLI on import; everything else must import without a devDependency.
    const entries = [
      join('cli', 'main.js'),
      EXECUTABLE,
      join('cli', 'run-job-entry.js'),
      join('cli', 'adapter-entry.js'),
    ];
    const modules = (await jsFiles(join(dir, 'dist')))
      .filter((f) => !entries.some((e) => f.endsWith(e)) && !f.includes(`${join('dist', 'dev')}/`))
      .map((f) => `./${relative(dir, f)}`);
    assert.ok(modules.length > 50);
    const script = `for (const m of ${JSON.stringify(modules)}) await import(m);`;
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', METADATA_SERVER_DETECTION: 'none' },
    });
    assert.equal(stderr, '');
  });
});
