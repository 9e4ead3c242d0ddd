#!/usr/bin/env node
import { Command } from 'commander';
import { buildCliProgram, runCliProgram } from './program.js';
import { packageVersion } from './version.js';

type Loader = () => Promise<Command>;

/**
 * Every command: a one-line summary for `pull-secret --help`, and its module, imported only when
 * that command runs (or its help is asked for): `--version` and `--help` load no command's
 * dependencies (stores, SDKs, schemas).
 */
export const COMMANDS: ReadonlyArray<readonly [name: string, summary: string, load: Loader]> = [
  ['run-job', 'run a job: pull-secret stores a cluster pull secret (the Jobs run this)', async () => (await import('./run-job.js')).runJobCommand()],
  ['inspect', "print a stored pull secret's metadata (never the payload)", async () => (await import('./inspect.js')).inspectCommand()],
  ['adapter', 'run the event-driven adapter', async () => (await import('./adapter.js')).adapterCommand()],
  ['validate-config', 'check an adapter configuration without starting anything', async () => (await import('./adapter.js')).validateConfigCommand()],
  ['dev', 'run the whole system on this machine (source checkout)', async () => (await import('./dev.js')).devCommand()],
  ['status', "show every cluster's pull secret status", async () => (await import('./status.js')).statusCommand()],
  ['preflight', "check a customer's setup before its first cluster", async () => (await import('./preflight.js')).preflightCommand()],
  ['store', 'maintain the local encrypted store (rotate-key)', async () => (await import('./store.js')).storeCommand()],
  ['transfer', 'ownership transfers of clusters (check)', async () => (await import('./transfer.js')).transferCommand()],
  ['admin', "call the adapter's admin API (get, list, reconcile, rollback, transfer-check)", async () => (await import('./admin.js')).adminCommand()],
  ['token', 'admin API tokens (rotate, show)', async () => (await import('./token.js')).tokenCommand()],
  ['rollback', "make an earlier version of a cluster's pull secret current again", async () => (await import('./rollback.js')).rollbackCommand()],
  ['verify', 'check that the registries accept a pull secret', async () => (await import('./verify.js')).verifyCommand()],
  ['completion', 'print a bash or zsh completion script', async () => (await import('./completion.js')).completionCommand(loadAll)],
];

/** Every command, loaded (shell completion walks the whole tree). */
async function loadAll(): Promise<Command> {
  return buildProgram(COMMANDS.map(([name]) => name));
}

/** The command `argv` runs (`pull-secret help X` asks for X's help), or undefined for the program's own options. */
function chosenCommand(argv: readonly string[]): string | undefined {
  const first = argv[2];
  return first === 'help' ? argv[3] : first;
}

/**
 * The `pull-secret` command tree with the commands named in `load` loaded in full and the others as
 * their name and summary only. Usage errors exit 2.
 */
export async function buildProgram(load: readonly string[]): Promise<Command> {
  const commands = await Promise.all(COMMANDS.map(async ([name, summary, loader]) => (load.includes(name) ? await loader() : new Command(name)).summary(summary)));
  return buildCliProgram(commands, packageVersion());
}

const chosen = chosenCommand(process.argv);
await runCliProgram(await buildProgram(chosen === undefined ? [] : [chosen]), process.argv);
