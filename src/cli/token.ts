import { Command } from 'commander';
import { printOut, reportFailure } from './output.js';

interface TokenOptions {
  file?: string;
  secretNamespace?: string;
  secretName?: string;
  kubeconfig?: string;
}

const where = (c: Command) =>
  c
    .option(
      '--file <file>',
      'admin token file (dev stack, tests); env ADMIN_TOKEN_FILE',
      process.env.ADMIN_TOKEN_FILE,
    )
    .option(
      '--secret-namespace <ns>',
      'namespace of the admin token Secret; env ADMIN_TOKEN_SECRET_NAMESPACE',
      process.env.ADMIN_TOKEN_SECRET_NAMESPACE,
    )
    .option(
      '--secret-name <name>',
      'name of the admin token Secret; env ADMIN_TOKEN_SECRET_NAME',
      process.env.ADMIN_TOKEN_SECRET_NAME,
    )
    .option('--kubeconfig <file>', 'kubeconfig for the Secret (default KUBECONFIG, then in-cluster)')
    .addHelpText('after', '\nExit codes: 0 done, 1 runtime failure, 2 usage or configuration error.');

/** `token rotate|show`: the admin API's tokens (docs/admin-api.md). Never prints a token. */
export function tokenCommand(): Command {
  const token = new Command('token').description(
    'Admin API tokens: rotate by hand, or show where the current one is.',
  );
  token.addCommand(
    where(
      new Command('rotate').description(
        'Rotate now: a new current token; the old one stays accepted until its lifetime ends.',
      ),
    ).action(async (options: TokenOptions) => {
      process.exitCode = await act('rotate', options);
    }),
  );
  token.addCommand(
    where(
      new Command('show').description(
        'Print where the current token is and how old it is (never the token).',
      ),
    ).action(async (options: TokenOptions) => {
      process.exitCode = await act('show', options);
    }),
  );
  return token;
}

async function act(action: 'rotate' | 'show', options: TokenOptions): Promise<number> {
  try {
    const { PullSecretError } = await import('../errors/index.js');
    const { tokenStorageFor } = await import('../admin/start-admin.js');
    const { TokenManager } = await import('../admin/token-manager.js');
    const secret =
      options.secretNamespace !== undefined || options.secretName !== undefined
        ? { namespace: options.secretNamespace ?? '', name: options.secretName ?? '' }
        : undefined;
    if ((options.file === undefined) === (secret === undefined))
      throw new PullSecretError(
        'CONFIG_INVALID',
        'give either --file or --secret-namespace and --secret-name',
      );
    if (secret !== undefined && (secret.namespace === '' || secret.name === ''))
      throw new PullSecretError('CONFIG_INVALID', '--secret-namespace and --secret-name go together');
    const storage = await tokenStorageFor(
      { file: options.file, secret, lifetimeSeconds: 0, pollSeconds: 0 },
      options.kubeconfig,
    );
    const manager = new TokenManager({ storage, pollMs: 0, rotate: action === 'rotate' });
    if (action === 'rotate') await manager.rotateNow();
    else await manager.start();
    const at = manager.currentGeneratedAt;
    const since = at === undefined ? '' : ` (generated ${new Date(at).toISOString()})`;
    const locate =
      options.file !== undefined
        ? `the "current.token" field of ${options.file}`
        : `key "token" of Secret ${secret?.namespace ?? ''}/${secret?.name ?? ''}`;
    printOut(
      action === 'rotate'
        ? `Rotated. The current token is in ${locate}${since}; the previous one stays accepted until its lifetime ends.`
        : `The current token is in ${locate}${since}.`,
    );
    return 0;
  } catch (err) {
    return reportFailure(err);
  }
}
