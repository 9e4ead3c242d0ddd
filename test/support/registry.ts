import { execFile, spawn } from 'node:child_process';
import { createHash, createPrivateKey, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { generateTestPki, type TestPki } from '../servers/kubernetes/tls.js';
import { cleanUpOnExit, freePort, killGroup } from './process-group.js';

const run = promisify(execFile);

/**
 * A real image registry for tests: Debian's `docker-registry` (CNCF Distribution) on 127.0.0.1 with
 * a random port, TLS from a throwaway CA, storage in a temp dir, and either htpasswd Basic auth or
 * token auth with a loopback token issuer written here (JWTs signed with an ES256 key whose
 * certificate is the registry's `rootcertbundle`). Nothing of the system install is used.
 */
export interface TestRegistry {
  /** `127.0.0.1:{port}`: the registry key of a pull secret and the host of image references. */
  readonly host: string;
  readonly auth: 'basic' | 'token';
  /** PEM of the CA that signed the registry's (and the token issuer's) certificate. */
  readonly caPem: string;
  /** A file holding `caPem`. */
  readonly caFile: string;
  /** A directory with `ca.crt`, for skopeo's `--cert-dir`. */
  readonly certDir: string;
  /** The account the registry accepts. */
  readonly username: string;
  readonly password: string;
  /** HTTP requests the registry has answered so far (from its access log). */
  requests(): number;
  /** Requests the token issuer answered (token mode; 0 otherwise). */
  tokenRequests(): number;
  /** Every token the issuer handed out (credentials too: for leak checks). */
  issuedTokens(): readonly string[];
  /** A `.dockerconfigjson` document for this registry with `user:password`. */
  pullSecret(username?: string, password?: string): string;
  /** The tiny test image skopeo pushed at start: `{host}/test/tiny:1`. */
  readonly image: string;
  /**
   * Basic mode: replaces the accounts of the htpasswd file (user, password pairs) and restarts the
   * registry on the same port and storage (docker-registry 2.8 reads htpasswd once, at start).
   */
  setAccounts(accounts: ReadonlyArray<readonly [string, string]>): Promise<void>;
  /** Stops the registry process (`resume` starts it again on the same port and storage). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Why the registry tests cannot run here, or undefined when they can: docker-registry, skopeo and
 * htpasswd must be installed (`npm run test:setup`). In CI they always run (a missing tool fails).
 */
export function registryUnavailable(): string | undefined {
  if (process.env.CI) return undefined;
  const missing = ['docker-registry', 'skopeo', 'htpasswd'].filter(
    (bin) => !(process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, bin))),
  );
  return missing.length === 0 ? undefined : `not installed: ${missing.join(', ')} (run npm run test:setup)`;
}

const START_DEADLINE_MS = 15_000;
/** One line of the registry's access log (combined log format), for a request under /v2/. */
const ACCESS_LINE = /\] "[A-Z]+ \/v2\/[^"]* HTTP\/[0-9.]+" \d{3} /g;

export interface RegistryOptions {
  auth: 'basic' | 'token';
  username?: string;
  password?: string;
}

/** Starts a registry, pushes the tiny image into it, and returns it. */
export async function startTestRegistry(options: RegistryOptions): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-registry-'));
  const username = options.username ?? 'puller';
  const password = options.password ?? `pw-${randomBytes(9).toString('hex')}`;
  let issuer: TokenIssuer | undefined;
  let proc: { pid: number; exited: Promise<void> } | undefined;
  let unhook = (): void => {};
  try {
    const pki = await generateTestPki(dir);
    await writeFile(join(dir, 'server.crt'), pki.certPem);
    await writeFile(join(dir, 'server.key'), pki.keyPem);
    const certDir = join(dir, 'certs');
    await mkdir(certDir);
    await writeFile(join(certDir, 'ca.crt'), pki.caPem);
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, pki.caPem);
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    let authSection: string;
    if (options.auth === 'basic') {
      const { stdout } = await run('htpasswd', ['-Bbn', username, password]);
      await writeFile(join(dir, 'htpasswd'), stdout);
      authSection = [
        'auth:',
        '  htpasswd:',
        '    realm: test-registry',
        `    path: ${join(dir, 'htpasswd')}`,
      ].join('\n');
    } else {
      issuer = await startTokenIssuer(dir, pki, {
        username,
        password,
        service: 'test-registry',
        issuer: 'test-issuer',
      });
      authSection = [
        'auth:',
        '  token:',
        `    realm: ${issuer.url}/token`,
        '    service: test-registry',
        '    issuer: test-issuer',
        `    rootcertbundle: ${issuer.certFile}`,
      ].join('\n');
    }
    const config = [
      'version: 0.1',
      'log:',
      '  level: info',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      'http:',
      `  addr: ${host}`,
      `  secret: ${randomBytes(16).toString('hex')}`,
      '  tls:',
      `    certificate: ${join(dir, 'server.crt')}`,
      `    key: ${join(dir, 'server.key')}`,
      authSection,
      '',
    ].join('\n');
    await writeFile(join(dir, 'config.yml'), config);
    const logFile = join(dir, 'registry.log');
    const start = async (): Promise<void> => {
      const fd = openSync(logFile, 'a');
      const child = spawn('docker-registry', ['serve', join(dir, 'config.yml')], {
        cwd: dir,
        detached: true,
        stdio: ['ignore', fd, fd],
      });
      closeSync(fd);
      if (child.pid === undefined) throw new Error('could not start docker-registry');
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      proc = { pid: child.pid, exited };
      await waitForPort(port, exited, logFile);
    };
    const halt = async (): Promise<void> => {
      const p = proc;
      if (p === undefined) return;
      proc = undefined;
      killGroup(p.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(p.pid, 'SIGKILL'), 5000);
      await p.exited;
      clearTimeout(timer);
    };
    unhook = cleanUpOnExit(() => {
      if (proc !== undefined) killGroup(proc.pid, 'SIGKILL');
    });
    await start();
    const image = `${host}/test/tiny:1`;
    await pushTinyImage(dir, image, certDir, `${username}:${password}`);
    const accessLines = async (): Promise<number> =>
      ((await readFile(logFile, 'utf8')).match(ACCESS_LINE) ?? []).length;
    const baseline = await accessLines();
    const tokenBaseline = issuer?.requests ?? 0;
    return {
      host,
      auth: options.auth,
      caPem: pki.caPem,
      caFile,
      certDir,
      username,
      password,
      image,
      // The registry writes an access-log line per answered request; the set-up's push is not counted.
      requests: () => (readFileSync(logFile, 'utf8').match(ACCESS_LINE) ?? []).length - baseline,
      tokenRequests: () => (issuer?.requests ?? 0) - tokenBaseline,
      issuedTokens: () => issuer?.tokens ?? [],
      pullSecret: (user = username, pass = password) =>
        JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user}:${pass}`).toString('base64') } } }),
      pause: halt,
      resume: start,
      async setAccounts(accounts) {
        if (options.auth !== 'basic')
          throw new Error('setAccounts needs a registry with htpasswd (Basic) auth');
        const lines = await Promise.all(
          accounts.map(async ([user, pass]) => (await run('htpasswd', ['-Bbn', user, pass])).stdout.trim()),
        );
        await writeFile(join(dir, 'htpasswd'), `${lines.join('\n')}\n`);
        await halt();
        await start();
      },
      async stop() {
        await halt();
        await issuer?.stop();
        unhook();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (proc !== undefined) killGroup(proc.pid, 'SIGKILL');
    unhook();
    await issuer?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Waits until the port accepts connections; fails early when the registry exits (its log is in the error). */
async function waitForPort(port: number, exited: Promise<void>, logFile: string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (gone)
      throw new Error(`docker-registry exited at start:\n${await readFile(logFile, 'utf8').catch(() => '')}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(50);
  }
  throw new Error(`docker-registry did not listen on ${port} within ${START_DEADLINE_MS} ms`);
}

const sha256 = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/**
 * Builds a one-layer OCI image layout by hand (gzip layer, config, manifest, index.json,
 * oci-layout) and copies it into the registry with skopeo.
 */
async function pushTinyImage(dir: string, image: string, certDir: string, creds: string): Promise<void> {
  const layout = join(dir, 'oci');
  const blobs = join(layout, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const content = join(dir, 'layer');
  await mkdir(content);
  await writeFile(join(content, 'hello.txt'), 'hello from the pull-secret tests\n');
  await run('tar', ['-czf', join(dir, 'layer.tar.gz'), '-C', content, 'hello.txt']);
  const layer = await readFile(join(dir, 'layer.tar.gz'));
  const blob = async (data: Buffer): Promise<{ digest: string; size: number }> => {
    const digest = sha256(data);
    await writeFile(join(blobs, digest.slice('sha256:'.length)), data);
    return { digest, size: data.length };
  };
  const layerRef = await blob(layer);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: {},
      rootfs: { type: 'layers', diff_ids: [sha256(gunzipSync(layer))] },
    }),
  );
  const configRef = await blob(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...configRef },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layerRef }],
    }),
  );
  const manifestRef = await blob(manifest);
  await writeFile(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifestRef,
          annotations: { 'org.opencontainers.image.ref.name': 'tiny' },
        },
      ],
    }),
  );
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await run(
    'skopeo',
    [
      'copy',
      '--insecure-policy',
      '--dest-creds',
      creds,
      '--dest-cert-dir',
      certDir,
      `oci:${layout}:tiny`,
      `docker://${image}`,
    ],
    { env: skopeoEnv(dir) },
  );
}

/** skopeo's environment: its own HOME and auth file location under the temp dir, so no user config is read or written. */
export function skopeoEnv(dir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    REGISTRY_AUTH_FILE: join(dir, 'no-auth.json'),
    XDG_RUNTIME_DIR: dir,
  };
}

/**
 * `skopeo inspect` of `image` with `authFile` as the credentials (a `.dockerconfigjson`).
 * Resolves with the exit code and output (never throws for a refusal).
 */
export async function skopeoInspect(
  image: string,
  authFile: string,
  certDir: string,
  dir: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      'skopeo',
      ['inspect', '--authfile', authFile, '--cert-dir', certDir, `docker://${image}`],
      { env: skopeoEnv(dir) },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

interface TokenIssuer {
  url: string;
  certFile: string;
  requests: number;
  tokens: string[];
  stop(): Promise<void>;
}

/**
 * A loopback token service (the Docker token authentication spec): `GET /token?service=&scope=`
 * with Basic credentials answers `{token, access_token}`, a JWT signed with ES256 whose `x5c` is the
 * signing certificate (the registry's `rootcertbundle`); wrong credentials get 401.
 */
async function startTokenIssuer(
  dir: string,
  pki: TestPki,
  options: { username: string; password: string; service: string; issuer: string },
): Promise<TokenIssuer> {
  const keyFile = join(dir, 'token.key');
  const certFile = join(dir, 'token.crt');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    '/CN=test-token-issuer',
  ]);
  const key = createPrivateKey(await readFile(keyFile));
  const certDer = pemToDer(await readFile(certFile, 'utf8'));
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const state = { requests: 0, tokens: [] as string[] };
  const server: Server = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    state.requests += 1;
    const url = new URL(req.url ?? '/', 'https://issuer');
    if (url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== expected) {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ details: 'invalid credentials' }));
      return;
    }
    const access = url.searchParams.getAll('scope').flatMap((scope) => {
      const [type, ...rest] = scope.split(':');
      const actions = rest.pop() ?? '';
      return type === undefined
        ? []
        : [{ type, name: rest.join(':'), actions: actions.split(',').filter(Boolean) }];
    });
    const token = signJwt(key, certDer, {
      iss: options.issuer,
      sub: options.username,
      aud: url.searchParams.get('service') ?? options.service,
      access,
    });
    state.tokens.push(token);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    certFile,
    get requests() {
      return state.requests;
    },
    tokens: state.tokens,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function pemToDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

const b64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

function signJwt(key: KeyObject, certDer: Buffer, claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const header = { typ: 'JWT', alg: 'ES256', x5c: [certDer.toString('base64')] };
  const body = { ...claims, iat: now, nbf: now - 10, exp: now + 300, jti: randomUUID() };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(body))}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(signature)}`;
}
