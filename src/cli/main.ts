#!/usr/bin/env node
import { Command } from 'commander';
import { buildCliProgram, runCliProgram } from './program.js';
import { packageVersion } from './version.js';

type Loader = () => Promise<Command>;

/** Every command's one-line summary for `pull-secret --help`, in the order listed. */
const SUMMARIES: Readonly<Record<string, string>> = {
  'run-job': 'run a job: pull-secret stores a cluster pull secret (the Jobs run this)',
  inspect: "print a stored pull secret's metadata (never the payload)",
  adapter: 'run the event-driven adapter',
  'validate-config': 'check an adapter configuration without starting anything',
  dev: 'run the whole system on this machine (source checkout)',
  status: "show every cluster's pull secret status",
  preflight: "check a customer's setup before its first cluster",
  store: 'maintain the local encrypted store (rotate-key)',
  transfer: 'ownership transfers of clusters (check)',
  admin: "call the adapter's admin API (get, list, reconcile, rollback, transfer-check)",
  token: 'admin API tokens (rotate, show)',
  rollback: "make an earlier version of a cluster's pull secret current again",
  verify: 'check that the registries accept a pull secret',
  completion: 'print a bash or zsh completion script',
};

/**
 * Every command's module, imported only when that command runs (or its help is asked for):
 * `--version` and `--help` load no command's dependencies (stores, SDKs, schemas).
 */
const LOADERS: Readonly<Record<string, Loader>> = {
  'run-job': async () => (await import('./run-job.js')).runJobCommand(),
  inspect: async () => (await import('./inspect.js')).inspectCommand(),
  adapter: async () => (await import('./adapter.js')).adapterCommand(),
  'validate-config': async () => (await import('./adapter.js')).validateConfigCommand(),
  dev: async () => (await import('./dev.js')).devCommand(),
  status: async () => (await import('./status.js')).statusCommand(),
  preflight: async () => (await import('./preflight.js')).preflightCommand(),
  store: async () => (await import('./store.js')).storeCommand(),
  transfer: async () => (await import('./transfer.js')).transferCommand(),
  admin: async () => (await import('./admin.js')).adminCommand(),
  token: async () => (await import('./token.js')).tokenCommand(),
  rollback: async () => (await import('./rollback.js')).rollbackCommand(),
  verify: async () => (await import('./verify.js')).verifyCommand(),
  completion: async () => (await import('./completion.js')).completionCommand(loadAll),
};

/** Every command, loaded (shell completion walks the whole tree). */
async function loadAll(): Promise<Command> {
  return buildProgram(Object.keys(SUMMARIES));
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
async function buildProgram(load: readonly string[]): Promise<Command> {
  const commands = await Promise.all(
    Object.entries(SUMMARIES).map(async ([name, summary]) => {
      const loader = LOADERS[name];
      const command = load.includes(name) && loader !== undefined ? await loader() : new Command(name);
      return command.summary(summary);
    }),
  );
  return buildCliProgram(commands, packageVersion());
}

const chosen = chosenCommand(process.argv);
await runCliProgram(await buildProgram(chosen === undefined ? [] : [chosen]), process.argv);
