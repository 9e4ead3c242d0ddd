import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileTokenStorage } from './token-file.js';
import { TokenManager } from './token-manager.js';
import { parseTokenState, serializeTokenState } from './token-state.js';

const HOUR = 3_600_000;
const LIFETIME = 24 * HOUR;

describe('token manager on a file', () => {
  let dir: string;
  let n = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-tokens-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** Two replicas (managers) sharing one token file and one injected clock. */
  function replicas(): { now: { t: number }; a: TokenManager; b: TokenManager; file: string } {
    const file = join(dir, `tokens-${++n}.json`);
    const now = { t: Date.parse('2026-01-01T00:00:00Z') };
    const make = () =>
      new TokenManager({
        storage: fileTokenStorage(file),
        lifetimeMs: LIFETIME,
        pollMs: 0,
        clock: () => now.t,
      });
    return { now, a: make(), b: make(), file };
  }

  async function tokens(file: string) {
    return parseTokenState(await readFile(file, 'utf8'), 'test');
  }

  it('creates the first token (mode 0600) and refuses none or a wrong one', async () => {
    const { a, file } = replicas();
    await a.start();
    const state = await tokens(file);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(a.check(state.current.token), 'current');
    assert.equal(a.check(undefined), undefined);
    assert.equal(a.check(''), undefined);
    assert.equal(a.check('not-the-token'), undefined);
    assert.equal(state.previous, undefined);
  });

  it('rotates at half the lifetime; the previous token works inside its grace and is refused after it', async () => {
    const { now, a, file } = replicas();
    await a.start();
    const first = (await tokens(file)).current.token;
    now.t += 11 * HOUR;
    await a.refresh();
    assert.equal((await tokens(file)).current.token, first, 'not due before half the lifetime');
    now.t += 1 * HOUR;
    await a.refresh();
    const rotated = await tokens(file);
    assert.notEqual(rotated.current.token, first);
    assert.equal(rotated.previous?.token, first);
    assert.equal(a.check(rotated.current.token), 'current');
    now.t += 11 * HOUR + 59 * 60_000; // 23 h 59 min after the first token was made
    assert.equal(a.check(first), 'previous', 'inside the grace');
    now.t += 60_000; // its lifetime is over
    assert.equal(a.check(first), undefined, 'after the grace');
    assert.equal(a.check(rotated.current.token), 'current');
  });

  it('a replica takes the token another replica rotated, without restart; only one of them rotates', async () => {
    const { now, a, b, file } = replicas();
    await a.start();
    await b.start();
    const first = (await tokens(file)).current.token;
    assert.equal(b.check(first), 'current', 'b read the token a created');
    now.t += 12 * HOUR;
    await Promise.all([a.refresh(), b.refresh()]);
    const state = await tokens(file);
    assert.equal(state.previous?.token, first, 'one rotation, not two (the loser re-read)');
    assert.equal(a.check(state.current.token), 'current');
    assert.equal(b.check(state.current.token), 'current');
    assert.equal(b.check(first), 'previous');
  });

  it('rotateNow by hand moves the current token to previous; a reader sees it on its next poll', async () => {
    const { a, b, file } = replicas();
    await a.start();
    const reader = b;
    await reader.start();
    const first = (await tokens(file)).current.token;
    await a.rotateNow();
    const state = await tokens(file);
    assert.equal(reader.check(state.current.token), undefined, 'not seen before a reload');
    await reader.refresh();
    assert.equal(reader.check(state.current.token), 'current');
    assert.equal(reader.check(first), 'previous');
  });

  it('a token file group or others may read (0644) is refused, as the local store key file is', async () => {
    const file = join(dir, 'open.json');
    const { writeFile, chmod } = await import('node:fs/promises');
    await writeFile(
      file,
      serializeTokenState({
        current: { token: randomBytes(32).toString('base64'), generatedAt: Date.now() },
      }),
    );
    await chmod(file, 0o644);
    const m = new TokenManager({ storage: fileTokenStorage(file), pollMs: 0 });
    await assert.rejects(m.start(), (err: Error) =>
      /accessible by group or others \(mode 0644\); refusing to use it/.test(err.message),
    );
    await chmod(file, 0o600);
    await m.start();
    m.stop();
  });

  it('a malformed file is a clear error that quotes no content', async () => {
    const file = join(dir, 'bad.json');
    const secretish = 'c2VjcmV0LXRva2VuLWJ5dGVzLXRoYXQtbXVzdC1ub3Qtc2hvdw==';
    await (
      await import('node:fs/promises')
    ).writeFile(file, JSON.stringify({ current: { token: secretish, generatedAt: 'yesterday' } }), {
      mode: 0o600,
    });
    const m = new TokenManager({ storage: fileTokenStorage(file), pollMs: 0 });
    await assert.rejects(
      m.start(),
      (err: Error) => err.message.includes('malformed') && !err.message.includes(secretish),
    );
  });
});
