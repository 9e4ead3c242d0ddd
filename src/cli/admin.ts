import { Command, Option } from 'commander';
import { printOut, reportFailure } from './output.js';
import { outputOption, render, type OutputFormat } from './output-format.js';

interface AdminOptions {
  server: string;
  tokenFile: string;
  caFile?: string;
  output: OutputFormat;
  timeout: string;
}

type Action = 'get' | 'list' | 'reconcile' | 'rollback' | 'transfer-check';

const EXIT_HELP =
  '\nExit codes: 0 done, 1 refused or unreachable (401, 403, 404, 429, timeout, connection refused), 2 ' +
  'usage or configuration error.';

/** `admin get|list|reconcile|rollback|transfer-check`: the client of the adapter's admin API (docs/admin-api.md). */
export function adminCommand(): Command {
  const admin = new Command('admin').description("Call the adapter's admin API (docs/admin-api.md).");
  const common = (c: Command) =>
    c
      .requiredOption(
        '--server <url>',
        'admin API, e.g. https://pull-secret-admin:8443; env PULL_SECRET_ADMIN_URL',
        process.env.PULL_SECRET_ADMIN_URL,
      )
      .requiredOption(
        '--token-file <file>',
        'file holding the admin token (first line); env PULL_SECRET_ADMIN_TOKEN_FILE',
        process.env.PULL_SECRET_ADMIN_TOKEN_FILE,
      )
      .option('--ca-file <file>', 'PEM CA that signed the server certificate')
      .option('--timeout <seconds>', 'give up after this long', '60')
      .addOption(outputOption())
      .addHelpText('after', EXIT_HELP);
  admin.addCommand(
    common(
      new Command('get')
        .argument('<cluster-id>')
        .description('One cluster: store versions (no payload), last conditions, Kubernetes Secret.'),
    ).action(run('get')),
  );
  admin.addCommand(
    common(new Command('list').description('Every cluster with its state, optionally filtered.'))
      .addOption(
        new Option('--filter <state>', 'only clusters in this state').choices([
          'failed',
          'degraded',
          'pending',
          'deleting',
          'healthy',
        ]),
      )
      .action(run('list')),
  );
  admin.addCommand(
    common(
      new Command('reconcile')
        .argument('<cluster-id>')
        .description('Reconcile one cluster now, as an event would, and show the outcome.'),
    ).action(run('reconcile')),
  );
  admin.addCommand(
    common(
      new Command('rollback')
        .argument('<cluster-id>')
        .description(
          'Make an earlier version current again (a new version), pin it, and update the Kubernetes Secret ' +
            '(docs/retention.md).',
        ),
    )
      .option('--to-version <n>', 'the version to restore (default: the previous one, or the pinned one)')
      .option('--reason <text>', 'why (kept in the pin, shown in the status)')
      .option('--expires-in <duration>', 'the pin ends by itself after this long (30m, 4h, 2d)')
      .option('--release', 'end the pin instead: the spec is served again')
      .action(run('rollback')),
  );
  admin.addCommand(
    common(
      new Command('transfer-check')
        .argument('<cluster-id>')
        .description(
          "Check the cluster's ownership transfer now and apply an accepted one (servers with accountService).",
        ),
    ).action(run('transfer-check')),
  );
  return admin;
}

/** The flags of `admin list` and `admin rollback`. */
interface RollbackFlags {
  filter?: string;
  toVersion?: string;
  reason?: string;
  expiresIn?: string;
  release?: boolean;
}

/** A rollback's body: the flags given (the server checks them). */
function rollbackBody(options: RollbackFlags): Record<string, string> | undefined {
  const body = Object.fromEntries(
    Object.entries({
      toVersion: options.toVersion,
      reason: options.reason,
      expiresIn: options.expiresIn,
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return Object.keys(body).length === 0 ? undefined : body;
}

function run(action: Action) {
  return async (...args: unknown[]) => {
    const clusterId = action === 'list' ? undefined : (args[0] as string);
    const options = (action === 'list' ? args[0] : args[1]) as AdminOptions & RollbackFlags;
    process.exitCode = await callAdmin(action, clusterId, options);
  };
}

async function callAdmin(
  action: Action,
  clusterId: string | undefined,
  options: AdminOptions & RollbackFlags,
): Promise<number> {
  try {
    // Loaded here: other commands must not pay for the admin client.
    const { adminRequest, expectOk, readTokenFile } = await import('../admin/admin-client.js');
    const format = await import('../admin/admin-format.js');
    const { readFileSync } = await import('node:fs');
    const { PullSecretError } = await import('../errors/index.js');
    const timeoutSeconds = Number(options.timeout);
    if (!(timeoutSeconds > 0))
      throw new PullSecretError('CONFIG_INVALID', '--timeout must be a positive number of seconds');
    let ca: string | undefined;
    if (options.caFile !== undefined) {
      try {
        ca = readFileSync(options.caFile, 'utf8');
      } catch {
        throw new PullSecretError(
          'CONFIG_INVALID',
          `cannot read --ca-file ${JSON.stringify(options.caFile)}`,
        );
      }
    }
    const token = readTokenFile(options.tokenFile);
    const release = action === 'rollback' && options.release === true;
    if (release && (options.toVersion ?? options.reason ?? options.expiresIn) !== undefined)
      throw new PullSecretError(
        'CONFIG_INVALID',
        '--release takes no --to-version, --reason or --expires-in',
      );
    const id = encodeURIComponent(clusterId ?? '');
    const path =
      action === 'list'
        ? `/clusters${options.filter ? `?filter=${options.filter}` : ''}`
        : action === 'get'
          ? `/clusters/${id}`
          : `/clusters/${id}/${action}${release ? '-release' : ''}`;
    const body = action === 'rollback' && !release ? rollbackBody(options) : undefined;
    const answer = await adminRequest({
      server: options.server,
      method: action === 'list' || action === 'get' ? 'GET' : 'POST',
      path,
      token,
      ca,
      timeoutMs: timeoutSeconds * 1000,
      ...(body === undefined ? {} : { body }),
    });
    const what =
      action === 'list' ? 'the cluster list' : action === 'get' ? `cluster ${clusterId ?? ''}` : action;
    const answered = expectOk(answer, what);
    // The admin API's views have no extra columns: wide is the table.
    const table = () => {
      if (action === 'list')
        return format.formatClusterList(
          (answered as { items: Parameters<typeof format.formatClusterList>[0] }).items,
        );
      if (action === 'get')
        return format.formatClusterView(answered as Parameters<typeof format.formatClusterView>[0]);
      if (release) return format.formatRelease(answered as Parameters<typeof format.formatRelease>[0]);
      if (action === 'rollback')
        return format.formatRollback(answered as Parameters<typeof format.formatRollback>[0]);
      if (action === 'transfer-check')
        return format.formatTransferCheck(answered as Parameters<typeof format.formatTransferCheck>[0]);
      return format.formatReconcile(answered as Parameters<typeof format.formatReconcile>[0]);
    };
    printOut(await render(options.output, answered, table));
    return 0;
  } catch (err) {
    return reportFailure(err);
  }
}
