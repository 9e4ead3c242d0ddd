import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { z } from 'zod';
import { storeSectionSchema } from '../stores/config-section.js';
import { verificationSectionSchema } from '../config/verification.js';
import { PullSecretError } from '../errors/index.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { printOut, reportFailure } from './output.js';
import { outputOption, render, type OutputFormat } from './output-format.js';
import {
  configuredStore,
  latestPullSecret,
  readConfigSections,
  type ScopeFlags,
} from './store-from-config.js';

interface VerifyOptions extends ScopeFlags {
  file?: string;
  clusterId?: string;
  config?: string;
  secretName?: string;
  caFile?: string;
  registry?: string[];
  timeoutMs: string;
  output: OutputFormat;
}

/** Largest pull secret file read (the largest store limit is 64 KiB; files are checked, not stored). */
const MAX_FILE_BYTES = 1024 * 1024;

/** The sections `verify --config` reads from the adapter's config file; the others are ignored. */
const verifyConfigSchema = z.object({
  store: storeSectionSchema.prefault({}),
  verification: verificationSectionSchema.prefault({}),
});

/** `verify`: the registry login check of a pull secret (a file, or a cluster's stored secret). */
export function verifyCommand(): Command {
  return new Command('verify')
    .description(
      'Log in to each registry a pull secret names (Docker Registry API v2) and print whether it accepts ' +
        'the credentials; nothing is written.',
    )
    .option('--file <file>', 'the pull secret (.dockerconfigjson / auth.json) to check')
    .option('--cluster-id <id>', "check the cluster's stored pull secret instead (needs --config)")
    .option('--config <file>', 'the adapter config file (its store and verification sections are used)')
    .option(
      '--project <id>',
      'with --cluster-id: the scope of a store with a one-setting scope (GCP project)',
    )
    .option('--scope <setting=value...>', 'with --cluster-id: the scope settings of any scoped store')
    .option(
      '--secret-name <name>',
      'with --cluster-id: the cloud secret (default hyperfleet-{cluster-id}-pull-secret)',
    )
    .option(
      '--ca-file <file>',
      "PEM CA of the registries' certificates (default: verification.caFile of --config)",
    )
    .option(
      '--registry <host...>',
      'check only these registries (auths keys or host[:port]); default every one (or ' +
        'verification.registries of --config)',
    )
    .option('--timeout-ms <ms>', 'time limit of one HTTP request', '10000')
    .addOption(outputOption())
    .addHelpText(
      'after',
      [
        '',
        'Prints one line per registry of the pull secret: the registry, accepted | rejected | unreachable | skipped,',
        'and why (HTTP status or network error; never a credential). Basic and Bearer (token realm) logins are',
        'supported; identitytoken entries are skipped. No cache and no rate limit: every registry is asked once.',
        'Exit codes: 0 every checked registry accepted, 1 any rejected or unreachable (or a store failure),',
        '2 usage or configuration error.',
      ].join('\n'),
    )
    .action(async (options: VerifyOptions) => {
      process.exitCode = await runVerify(options);
    });
}

async function runVerify(options: VerifyOptions): Promise<number> {
  try {
    const timeoutMs = Number(options.timeoutMs);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 120_000)
      throw new PullSecretError('CONFIG_INVALID', '--timeout-ms must be a whole number from 100 to 120000');
    if ((options.file === undefined) === (options.clusterId === undefined))
      throw new PullSecretError('CONFIG_INVALID', 'give exactly one of --file and --cluster-id');
    if (options.clusterId !== undefined && options.config === undefined)
      throw new PullSecretError(
        'CONFIG_INVALID',
        '--cluster-id needs --config (the adapter config file naming the store)',
      );
    const section =
      options.config === undefined ? undefined : await readConfigSections(options.config, verifyConfigSchema);
    const text =
      options.file !== undefined
        ? await readPullSecretFile(options.file)
        : await readStored(options as VerifyOptions & { clusterId: string }, section?.store);
    // Before anything else touches the document.
    redactor.register(credentialStrings(text));
    validatePullSecret(text, { maxBytes: MAX_FILE_BYTES, targetName: 'verify' });
    const { RegistryVerifier } = await import('../verification/verifier.js');
    const verifier = new RegistryVerifier({
      registries:
        options.registry ??
        (section !== undefined && section.verification.registries.length > 0
          ? section.verification.registries
          : ['*']),
      caFile: options.caFile ?? section?.verification.caFile,
      timeoutMs,
      perRegistryPerMinute: 100_000,
      cacheSeconds: 0,
    });
    try {
      const report = await verifier.verify(text);
      const results = report.results.map((r) => ({
        registry: r.registry,
        outcome: r.outcome,
        detail: r.detail,
      }));
      printOut(
        await render(options.output, { results }, () =>
          results.map((r) => `${r.registry}\t${r.outcome}\t${r.detail}`).join('\n'),
        ),
      );
      return report.results.some((r) => r.outcome === 'rejected' || r.outcome === 'unreachable') ? 1 : 0;
    } finally {
      verifier.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}

async function readPullSecretFile(path: string): Promise<string> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `cannot read the pull secret file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { cause: err },
    );
  }
  if (data.length > MAX_FILE_BYTES)
    throw new PullSecretError(
      'PAYLOAD_TOO_LARGE',
      `invalid pull secret format: ${data.length} bytes exceeds the verify limit of ${MAX_FILE_BYTES} bytes`,
    );
  return data.toString('utf8');
}

/** The newest enabled version of the cluster's stored pull secret. */
async function readStored(
  options: VerifyOptions & { clusterId: string },
  storeSection: z.output<typeof storeSectionSchema> | undefined,
): Promise<string> {
  assertClusterId(options.clusterId);
  const { open } = configuredStore(storeSection ?? storeSectionSchema.parse({}), options);
  const store = await open();
  try {
    return (await latestPullSecret(store, options.clusterId, options.secretName)).toString('utf8');
  } finally {
    await store.close();
  }
}
