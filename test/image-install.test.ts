// The container image, without a Docker engine: a structural lint of the Dockerfile (hadolint is not
// installable here), then what its stages do, on this machine: build with tsc, install production
// dependencies with the exact `npm ci` line of the deps stage into a clean directory, and run the
// CLI from there, the way the image's ENTRYPOINT, the Jobs' `pull-secret` command and the upstream
// chart's `/usr/local/bin/pull-secret` do. The dev stack (dist/dev, its dependencies, contracts/) stays
// out: `pull-secret dev` there says so in one line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JOB_DEFAULTS } from '../src/kube/job-manifest.js';
import { DEFAULT_DEV_DATA_DIR } from '../src/dev/data-dir.js';
import { VALID_PULL_SECRET } from './support/fixtures.js';
import { jsFiles } from './support/bundle.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const run = promisify(execFile);

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
const stageByName = (name: string) => stages.find((s) => s.name === name);
/** The stage whose node_modules the runtime image copies, and its `npm ci` line. */
const depsStage = stageByName(/--from=(\S+)\s+\S*node_modules/.exec(final.steps.map((s) => `${s.op} ${s.args}`).join('\n'))?.[1] ?? '');
const prodInstall =
  depsStage?.steps
    .find((s) => s.op === 'RUN' && /\bnpm ci\b/.test(s.args))
    ?.args.split('&&')[0]
    ?.trim() ?? '';
/** The build stage: the one whose RUN compiles (`npm run build`), and that RUN's commands. */
const buildStage = stages.find((s) => s.steps.some((x) => x.op === 'RUN' && /\bnpm run build\b/.test(x.args)));
const buildCommands =
  buildStage?.steps
    .find((x) => x.op === 'RUN' && /\bnpm run build\b/.test(x.args))
    ?.args.split('&&')
    .map((c) => c.trim()) ?? [];
/** What the build stage deletes from its output after compiling (`rm -rf <path>`). */
const buildRemovals = buildCommands.flatMap((c) => /^rm -rf (\S+)$/.exec(c)?.[1] ?? []);
const finalWorkdir = final.steps.findLast((s) => s.op === 'WORKDIR')?.args ?? '';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; dependencies: Record<string, string>; engines: { node: string } };
/** The executable (package.json "bin"): dist/cli/pull-secret.js, which runs `run-job` from the job's bundle. */
const EXECUTABLE = pkg.bin['pull-secret'] ?? '';

describe('Dockerfile (structural lint)', () => {
  test('multi-stage on UBI 9 Node.js 22 LTS (the engines field allows it), the runtime on the minimal image, tags pinned', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    for (const stage of stages) assert.match(stage.from, /^registry\.access\.redhat\.com\/ubi9\/nodejs-22(-minimal)?:(?!latest$)[\w.-]+$/, stage.from);
    assert.match(final.from, /^registry\.access\.redhat\.com\/ubi9\/nodejs-22-minimal:/);
    assert.match(pkg.engines.node, /\|\| \^22\.\d+\.\d+$/, 'engines names Node 22');
    assert.equal(final.steps.filter((s) => s.op === 'RUN').length, 0, 'nothing runs in the runtime stage (no shell, no package manager needed)');
  });

  test('production dependencies only: npm ci --omit=dev from the lock file; never npm install', () => {
    assert.doesNotMatch(dockerfileText, /\bnpm (install|i)\b/);
    assert.ok(depsStage, 'the runtime copies node_modules from a named stage');
    assert.match(prodInstall, /^npm ci\b.*--omit=dev/);
    assert.match(prodInstall, /--ignore-scripts/);
    for (const stage of stages.filter((s) => s.steps.some((x) => x.op === 'RUN' && /\bnpm ci\b/.test(x.args)))) {
      const copyLock = stage.steps.findIndex((x) => x.op === 'COPY' && /package-lock\.json/.test(x.args));
      const install = stage.steps.findIndex((x) => x.op === 'RUN' && /\bnpm ci\b/.test(x.args));
      assert.ok(copyLock >= 0 && copyLock < install, `${stage.name ?? stage.from}: package-lock.json is copied before npm ci`);
    }
    assert.doesNotMatch(dockerfileText, /\b(curl|wget)\b|^ADD\s+https?:/m, 'nothing fetched outside the package manager');
  });

  test('runs as UID 1000, exposes 8080 and 9090, health documented for Kubernetes probes', () => {
    const users = final.steps.filter((s) => s.op === 'USER');
    assert.match(users.at(-1)?.args ?? '', /^1000(:1000)?$/);
    assert.equal(final.steps.findLast((s) => s.op === 'EXPOSE')?.args, '8080 9090');
    const healthcheck = final.steps.some((s) => s.op === 'HEALTHCHECK');
    assert.ok(healthcheck || /No HEALTHCHECK: Kubernetes probes \/healthz and \/readyz on port 8080/.test(dockerfileText));
  });

  test("the Jobs' command `pull-secret` is on PATH and is the ENTRYPOINT", () => {
    assert.equal(JOB_DEFAULTS.command[0], 'pull-secret');
    assert.match(final.steps.find((s) => s.op === 'ENV')?.args ?? '', /PATH=\/opt\/pull-secret\/bin:\$PATH/);
    assert.equal(final.steps.find((s) => s.op === 'ENTRYPOINT')?.args, '["pull-secret"]');
    assert.equal(EXECUTABLE, 'dist/cli/pull-secret.js');
    assert.ok(stages.some((s) => s.steps.some((x) => x.op === 'RUN' && x.args.includes(`ln -s ../${EXECUTABLE} bin/pull-secret`))));
    assert.ok(buildCommands.includes(`chmod 0755 ${EXECUTABLE}`), 'the executable is executable');
  });

  test("the image's NODE_OPTIONS are the Job pods' (the job run from the image keeps the small young generation)", () => {
    const env = final.steps.find((s) => s.op === 'ENV')?.args ?? '';
    assert.equal(/\bNODE_OPTIONS=(\S+)/.exec(env)?.[1], JOB_DEFAULTS.nodeOptions);
  });

  test("the upstream chart's /usr/local/bin/pull-secret is a link to the same executable", () => {
    const link = buildCommands.map((c) => /^ln -s (\S+) (\S+)\/pull-secret$/.exec(c)).find((m) => m?.[1]?.startsWith('/'));
    assert.ok(link, 'the build stage makes an absolute link for /usr/local/bin');
    assert.equal(link[1], `${finalWorkdir}/${EXECUTABLE}`, "it points at the runtime's executable");
    // A directory copy (trailing slash) keeps the link a link; a single-file copy would follow it.
    const buildWorkdir = buildStage?.steps.findLast((s) => s.op === 'WORKDIR')?.args ?? '';
    assert.ok(
      final.steps.some((s) => s.op === 'COPY' && s.args === `--from=${buildStage?.name} ${buildWorkdir}/${link[2]}/ /usr/local/bin/`),
      'the runtime copies that directory onto /usr/local/bin/',
    );
    assert.ok(
      final.steps.some((s) => s.op === 'COPY' && /--from=\S+ \S+\/dist \.\/dist$/.test(s.args)),
      'dist lands under the WORKDIR',
    );
  });

  test('the dev stack stays out: dist/dev removed, no contracts/, no dev-only production dependency', () => {
    assert.ok(buildRemovals.includes('dist/dev'), 'the build stage drops dist/dev');
    assert.ok(!final.steps.some((s) => s.op === 'COPY' && /\bcontracts\b/.test(s.args)), "contracts/ (the API stand-in's) is not copied");
    // Every production dependency is imported by production code (src/ outside src/dev and tests).
    const production = listTs(join(ROOT, 'src')).filter((f) => !f.endsWith('.test.ts') && !f.includes(`${join('src', 'dev')}/`));
    const text = production.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const dep of Object.keys(pkg.dependencies)) {
      const escaped = dep.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      assert.match(text, new RegExp(`(from |import\\()'${escaped}(/[^']*)?'`), `${dep} is used only outside production code: make it a devDependency`);
    }
  });

  test('.dockerignore lets in only what the Dockerfile copies from the context', () => {
    const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(lines[0], '*', 'deny by default');
    const allowed = lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = stages.flatMap((s) => s.steps.filter((x) => x.op === 'COPY' && !x.args.includes('--from=')).flatMap((x) => x.args.replace(/--\S+/g, '').trim().split(/\s+/).slice(0, -1)));
    for (const source of copied) assert.ok(allowed.includes(source.replace(/\/$/, '')), `${source} is in the build context`);
    for (const secret of ['.pull-secret', 'node_modules', 'dist', '.git', 'test', 'contracts']) assert.ok(!allowed.includes(secret), `${secret} stays out`);
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

function cli(dir: string, args: string[], env: Record<string, string> = {}, command = 'pull-secret'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // What the image sets: bin first on PATH, production mode; nothing inherited that reaches a cloud.
    const childEnv = { PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`, HOME: dir, NODE_ENV: 'production', METADATA_SERVER_DETECTION: 'none', ...env };
    const child = spawn(command, args, { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe("the image's production install, in a clean directory", { timeout: 8 * 60_000 }, () => {
  let dir = '';
  let reachable = false;

  before(async () => {
    reachable = await registryReachable();
    if (!reachable) return;
    dir = await mkdtemp(join(tmpdir(), 'image-install-'));
    // The build stage: `npm run build` (tsc -p tsconfig.build.json), into our own directory so the
    // shared dist/ is left alone; then the executable and its PATH link.
    await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    // The second step of `npm run build`: the job's and the adapter's bundles.
    await run(process.execPath, ['scripts/bundle.mjs', '--dist', join(dir, 'dist')], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    await chmod(join(dir, EXECUTABLE), 0o755);
    // A source checkout installed with --omit=dev keeps the whole build: kept aside for the dev test.
    await cp(join(dir, 'dist'), join(dir, 'checkout', 'dist'), { recursive: true });
    for (const path of buildRemovals) await rm(join(dir, path), { recursive: true, force: true });
    await mkdir(join(dir, 'bin'));
    await symlink(`../${EXECUTABLE}`, join(dir, 'bin', 'pull-secret'));
    // The upstream chart's absolute path, with the image's WORKDIR standing for this directory.
    await mkdir(join(dir, 'usr-local-bin'));
    await symlink(join(dir, EXECUTABLE), join(dir, 'usr-local-bin', 'pull-secret'));
    for (const file of ['package.json', 'package-lock.json']) await cp(join(ROOT, file), join(dir, file));
    // The deps stage, exactly as the Dockerfile says it.
    const [command, ...args] = prodInstall.split(/\s+/);
    await run(command as string, args, { cwd: dir, timeout: 6 * 60_000, maxBuffer: 16 * 1024 * 1024 });
    await cp(join(dir, 'package.json'), join(dir, 'checkout', 'package.json'));
    await symlink(join(dir, 'node_modules'), join(dir, 'checkout', 'node_modules'));
  });

  after(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  test('installs production dependencies only', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed): cannot prove the production install');
    assert.ok(existsSync(join(dir, 'node_modules', 'commander')));
    for (const dev of ['typescript', 'tsx', 'eslint', 'kubernetes-models', 'typescript-eslint', 'ajv-formats']) assert.ok(!existsSync(join(dir, 'node_modules', dev)), `${dev} is a devDependency`);
    // ajv itself stays only as a dependency of cloudevents (its event validation), never one of ours.
    const lock = JSON.parse(await readFile(join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies?: Record<string, string> }> };
    const ajvUsers = Object.entries(lock.packages)
      .filter(([, p]) => p.dependencies?.ajv !== undefined)
      .map(([path]) => path.replace(/^node_modules\//, ''));
    assert.deepEqual(
      ajvUsers.filter((p) => !p.startsWith('cloudevents')),
      [],
      'only cloudevents needs ajv in production',
    );
    assert.ok(!existsSync(join(dir, 'dist', 'dev')) && !existsSync(join(dir, 'contracts')), 'no dev stack, no API contract');
  });

  test('every production command answers --help; `dev --help` too, without loading the dev stack', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    for (const command of ['run-job', 'inspect', 'adapter', 'validate-config', 'status', 'preflight', 'dev']) {
      const result = await cli(dir, [command, '--help']);
      assert.equal(result.code, 0, `${command}: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^Usage: pull-secret ${command}`), command);
    }
    assert.ok((await cli(dir, ['dev', '--help'])).stdout.includes(`(default ${DEFAULT_DEV_DATA_DIR})`), "the help names the dev stack's default data directory");
  });

  test('`dev` in the image: one clear line, exit 2, no stack trace', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const result = await cli(dir, ['dev', '--demo', '--exit-when-settled']);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^pull-secret: the dev stack is not part of this installation \(dist\/dev\/\S+\.js is missing\): run it from a source checkout after npm ci \(npm start\)\n$/);
  });

  test('`dev` in a source checkout installed with --omit=dev: names the missing development dependency', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const checkout = join(dir, 'checkout');
    const result = await cli(checkout, ['dev', '--demo', '--exit-when-settled'], {}, join(checkout, EXECUTABLE));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^pull-secret: the dev stack is not part of this installation \(ajv-formats is missing\)[^\n]*\n$/);
    assert.ok(!existsSync(join(checkout, DEFAULT_DEV_DATA_DIR)), 'nothing written');
  });

  test("the upstream chart's /usr/local/bin/pull-secret runs the job from any directory", async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const result = await cli(tmpdir(), ['run-job', 'pull-secret', '--help'], {}, join(dir, 'usr-local-bin', 'pull-secret'));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Usage: pull-secret run-job/);
  });

  test('`pull-secret --version` runs through the PATH link', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const result = await cli(dir, ['--version']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), pkg.version);
    assert.ok((await stat(join(dir, 'bin', 'pull-secret'))).isFile());
  });

  test('`run-job pull-secret --dry-run` on the local store', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    const result = await cli(dir, ['run-job', 'pull-secret', '--dry-run'], {
      SECRET_STORE: 'local',
      LOCAL_STORE_DIR: join(dir, 'store'),
      CLUSTER_ID: '019466a0-8f8e-7abc-9def-0123456789ab',
      PULL_SECRET_DATA: VALID_PULL_SECRET,
    });
    assert.equal(result.code, 0, result.stderr);
    const last = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    assert.deepEqual([last.operation, last.outcome, last.dry_run], ['completed', 'created', true]);
  });

  test('`validate-config` accepts the shipped adapter configurations', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    for (const config of ['deploy/base/adapter.yaml', 'deploy/overlays/job/adapter.yaml']) {
      const result = await cli(dir, ['validate-config', '--config', join(ROOT, config)]);
      assert.equal(result.code, 0, `${config}: ${result.stderr}`);
      assert.match(result.stdout, /^configuration is valid: broker pubsub, store gcp/);
    }
  });

  test('every compiled module loads with production dependencies alone', async (t) => {
    if (!reachable) return t.skip('the npm registry is unreachable (npm ping failed)');
    // main.js, the executable and the bundles' entries run the CLI on import; everything else must import without a
    // devDependency. (The bundles hold their dependencies: the run-job and adapter tests above run them.)
    const entries = [join('cli', 'main.js'), EXECUTABLE, join('cli', 'run-job-entry.js'), join('cli', 'adapter-entry.js')];
    const modules = (await jsFiles(join(dir, 'dist'))).filter((f) => !entries.some((e) => f.endsWith(e)) && !f.includes(`${join('dist', 'bundle')}/`)).map((f) => `./${relative(dir, f)}`);
    assert.ok(modules.length > 50);
    const script = `for (const m of ${JSON.stringify(modules)}) await import(m);`;
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', METADATA_SERVER_DETECTION: 'none' } });
    assert.equal(stderr, '');
  });
});
