// Shell completion (`pull-secret completion bash|zsh`), generated from the command tree: the script is
// sourced in a real bash and asked for completions the way bash asks (COMP_WORDS, COMP_CWORD).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseEnv, runCli } from '../support/cli.js';

/** What the sourced `script` completes for the words typed so far (the last one being completed). */
async function complete(script: string, words: string[]): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-completion-'));
  try {
    await writeFile(join(dir, 'completion.bash'), script);
    const program = [
      `source ${JSON.stringify(join(dir, 'completion.bash'))}`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      '"$(complete -p pull-secret | sed -E "s/.*-F ([^ ]+).*/\\1/")"',
      'printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['--norc', '--noprofile', '-c', program]);
    return stdout.split('\n').filter((l) => l !== '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('bash: the sourced script completes commands, subcommands, options and -o values', async () => {
  const result = await runCli(['completion', 'bash'], baseEnv());
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await complete(result.stdout, ['pull-secret', 'adm']), ['admin']);
  assert.deepEqual(await complete(result.stdout, ['pull-secret', 'admin', 'li']), ['list']);
  assert.deepEqual(await complete(result.stdout, ['pull-secret', 'validate-config', '--c']), ['--config']);
  assert.deepEqual(await complete(result.stdout, ['pull-secret', 'status', '-o', '']), [
    'table',
    'wide',
    'json',
    'yaml',
  ]);
  assert.deepEqual(await complete(result.stdout, ['pull-secret', 'admin', 'list', '--output', 'y']), [
    'yaml',
  ]);
});

test('zsh: the bash script through bashcompinit; an unknown shell is a usage error', async () => {
  const zsh = await runCli(['completion', 'zsh'], baseEnv());
  assert.equal(zsh.code, 0, zsh.stderr);
  assert.match(
    zsh.stdout,
    /^# zsh completion of pull-secret[^\n]*\nautoload -U \+X bashcompinit && bashcompinit\n# bash completion/,
  );
  const fish = await runCli(['completion', 'fish'], baseEnv());
  assert.equal(fish.code, 2);
  assert.match(fish.stderr, /'fish' is invalid for argument 'shell'/);
});
