import { Command, Option } from 'commander';
import { PullSecretError } from '../errors/index.js';
import { selectStoreKind, storeFactories, storeFactory } from '../stores/registry.js';
import { printError, printOut, reportFailure } from './output.js';
import { outputOption, render, type OutputFormat } from './output-format.js';

/** The stores that declare preflight checks. */
function withPreflight() {
  return storeFactories().filter((s) => s.preflight !== undefined);
}

/**
 * `preflight`: a store's checks of a customer's setup before its first cluster. The options are
 * the ones the stores declare; the store is `--store`, else SECRET_STORE, else the store whose
 * own options are given (see chooseStore).
 */
export function preflightCommand(): Command {
  const stores = withPreflight();
  const command = new Command('preflight')
    .description(
      `Check a customer's setup before its first cluster ` +
        `(${stores.map((s) => `${s.kind}: ${s.preflight?.summary ?? ''}`).join('; ')}).`,
    )
    .option(
      '--store <kind>',
      `store to check (default SECRET_STORE, else the store whose options are given, else ` +
        `${stores[0]?.kind ?? 'none'}; one of ${stores.map((s) => s.kind).join(' | ')})`,
    )
    .addOption(outputOption())
    .option('--json', 'same as -o json', false);
  const seen = new Set<string>();
  for (const store of stores) {
    for (const option of store.preflight?.options ?? []) {
      if (seen.has(option.flags)) continue;
      seen.add(option.flags);
      const built = new Option(option.flags, `[${store.kind}] ${option.description}`);
      command.addOption(option.defaultValue === undefined ? built : built.default(option.defaultValue));
    }
  }
  const help = stores.map((s) => `\n[${s.kind}] ${s.preflight?.help ?? ''}`).join('\n');
  return command
    .addHelpText(
      'after',
      `${help}\n\nA store without preflight checks says so and exits 2. Exit codes: 0 every check passed ` +
        `(warnings allowed), 1 a check failed, 2 usage error.`,
    )
    .action(async (options: Record<string, unknown>) => {
      process.exitCode = await preflight(options);
    });
}

/**
 * The store to check: `--store`, else SECRET_STORE, else the one store whose own options were given
 * (`--project`: gcp, `--vault-url`: azure), else the store the environment selects (e.g.
 * AZURE_KEY_VAULT_URL), else the first store with checks (gcp).
 */
function chooseStore(explicit: unknown, options: Record<string, unknown>): string {
  const chosen = typeof explicit === 'string' && explicit !== '' ? explicit : process.env.SECRET_STORE;
  if (chosen !== undefined && chosen !== '') return storeFactory(chosen).kind;
  const stores = withPreflight();
  const given = stores.filter((s) =>
    s.preflight?.options.some(
      (o) => o.defaultValue === undefined && options[new Option(o.flags, '').attributeName()] !== undefined,
    ),
  );
  if (given.length === 1) return (given[0] as (typeof given)[number]).kind;
  if (given.length > 1)
    throw new PullSecretError(
      'CONFIG_INVALID',
      `options of several stores were given; choose the store to check with --store ` +
        `(${stores.map((s) => s.kind).join(', ')})`,
    );
  const selected = selectStoreKind(process.env);
  const first = stores.find((s) => s.kind === selected) ?? stores[0];
  if (first === undefined) throw new PullSecretError('CONFIG_INVALID', 'no store has preflight checks');
  return first.kind;
}

async function preflight(options: Record<string, unknown>): Promise<number> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.on('SIGINT', abort).on('SIGTERM', abort);
  try {
    const store = storeFactory(chooseStore(options.store, options));
    if (store.preflight === undefined) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `the ${store.kind} store has no preflight checks: nothing needs to be set up before its first cluster`,
      );
    }
    // Loaded here: a store's checks pull in its SDK, which other commands must not pay for.
    const run = await store.preflight.load();
    const format = options.json === true ? 'json' : (options.output as OutputFormat);
    // The stores' reports come as text (table, wide) or JSON (json, yaml).
    const structured = format === 'json' || format === 'yaml';
    const outcome = await run(
      { ...options, json: structured },
      { env: process.env, signal: controller.signal },
    );
    printOut(
      structured
        ? await render(format, JSON.parse(outcome.output) as unknown, () => outcome.output)
        : outcome.output,
    );
    if (outcome.ok) return 0;
    const failed = outcome.failedChecks;
    printError(
      `preflight failed: ${failed} check${failed === 1 ? '' : 's'} failed; run the fix commands above, ` +
        `then preflight again`,
    );
    return 1;
  } catch (err) {
    return reportFailure(err);
  } finally {
    process.off('SIGINT', abort).off('SIGTERM', abort);
  }
}
