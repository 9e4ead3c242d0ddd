import { Command } from 'commander';
import { parseEnv, throwEnvProblems } from '../config/env.js';
import { PullSecretError } from '../errors/index.js';
import { localStoreConfigSchema, localStoreEnv } from '../stores/local/config.js';
import { printOut, reportFailure } from './output.js';
import { factsTable, outputOption, render, type OutputFormat } from './output-format.js';

/** `store`: maintenance of the embedded local store. */
export function storeCommand(): Command {
  const store = new Command('store')
    .description('Maintenance of the local encrypted secret store.')
    // main.ts sets exit and output behaviour on top-level commands once built; sub-commands take them from here.
    .hook('preSubcommand', (self, sub) => {
      sub.copyInheritedSettings(self);
    });
  store.addCommand(
    new Command('rotate-key')
      .description(
        'Re-encrypt every secret version of the local store under a new key, then retire the old key.',
      )
      .addHelpText(
        'after',
        [
          '',
          'The store comes from LOCAL_STORE_DIR and its key from LOCAL_STORE_KEY_FILE (default ' +
            '{LOCAL_STORE_DIR}/store.key);',
          'a key given with LOCAL_STORE_KEY cannot be rotated here (rotate it where it is kept).',
          'The new key is written to {key file}.next first; every record is then re-encrypted and replaced one by one,',
          'and stays readable under either key meanwhile (jobs and the adapter may keep running). Finally the new key',
          'replaces the key file. If the command is interrupted, run it again: it finishes the rotation.',
          'Prints a summary, one JSON line unless -o says otherwise (key ids are fingerprints, not keys).',
          'Exit codes: 0 rotated, 1 store failure, 2 usage or configuration error.',
        ].join('\n'),
      )
      .addOption(outputOption('json'))
      .action(async (options: { output: OutputFormat }) => {
        process.exitCode = await rotateKey(options.output);
      }),
  );
  return store;
}

async function rotateKey(output: OutputFormat): Promise<number> {
  try {
    const parsed = parseEnv(localStoreConfigSchema, localStoreEnv, process.env);
    throwEnvProblems([parsed]);
    if (!parsed.ok) throw new PullSecretError('CONFIG_INVALID', 'invalid local store configuration');
    if (parsed.value.key !== undefined) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        'the store key is given with LOCAL_STORE_KEY: rotate-key replaces a key file; unset ' +
          'LOCAL_STORE_KEY and use LOCAL_STORE_KEY_FILE',
      );
    }
    // Loaded here, not at start-up: the local store's files and locks are not every command's.
    const { rotateStoreKey } = await import('../stores/local/rotate-key.js');
    const result = await rotateStoreKey({
      dir: parsed.value.dir,
      ...(parsed.value.keyFile === undefined ? {} : { keyFile: parsed.value.keyFile }),
    });
    const summary = {
      rotated: true,
      old_key_id: result.oldKeyId,
      new_key_id: result.newKeyId,
      secrets: result.secrets,
      versions_reencrypted: result.reencrypted,
      resumed: result.resumed,
    };
    printOut(await render(output, summary, () => factsTable(summary), { oneLine: true }));
    return 0;
  } catch (err) {
    return reportFailure(err);
  }
}
