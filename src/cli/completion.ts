import { Argument, Command } from 'commander';
import { printOut } from './output.js';

/** One node of the command tree: its words (subcommands, long options) and the options with fixed values. */
interface Node {
  path: string;
  words: string[];
  choices: Array<{ flags: string[]; values: readonly string[] }>;
}

/** Every command of the tree, depth first, with what may follow it. */
function nodes(command: Command, path: string[] = []): Node[] {
  const options = command.options.filter((o) => !o.hidden);
  const words = [
    ...command.commands.map((c) => c.name()),
    ...options.flatMap((o) => (o.long === undefined ? [] : [o.long])),
    '--help',
  ];
  const choices = options
    .filter((o) => o.argChoices !== undefined)
    .map((o) => ({
      flags: [o.short, o.long].filter((f): f is string => f !== undefined),
      values: o.argChoices ?? [],
    }));
  return [
    { path: path.join(' '), words, choices },
    ...command.commands.flatMap((c) => nodes(c, [...path, c.name()])),
  ];
}

/** A shell word list, single-quoted. */
const quoted = (words: readonly string[]) => `'${words.join(' ')}'`;

/**
 * The bash completion script of `program`: subcommands at each level, long options of the command
 * typed so far, and the values of an option with fixed values (`-o table|wide|json|yaml`).
 */
function bashCompletion(program: Command): string {
  const tree = nodes(program);
  const known = tree.filter((n) => n.path !== '').map((n) => `"${n.path}"`);
  const cases = tree.map((n) => {
    const values = n.choices.map(
      (c) =>
        `        ${c.flags.join('|')}) COMPREPLY=($(compgen -W ${quoted(c.values)} -- "$cur")); return ;;`,
    );
    const prev = values.length > 0 ? ['      case "$prev" in', ...values, '      esac'] : [];
    return [`    "${n.path}")`, ...prev, `      words=${quoted(n.words)} ;;`].join('\n');
  });
  return [
    '# bash completion of pull-secret: source <(pull-secret completion bash)',
    '_pull_secret() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" words="" i next',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    next="${path:+$path }${COMP_WORDS[i]}"',
    '    case "$next" in',
    `      ${known.join('|')}) path="$next" ;;`,
    '    esac',
    '  done',
    '  case "$path" in',
    ...cases,
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    'complete -o default -F _pull_secret pull-secret',
    '',
  ].join('\n');
}

/** The zsh completion script: the bash one through zsh's bashcompinit. */
function zshCompletion(program: Command): string {
  return [
    '# zsh completion of pull-secret: source <(pull-secret completion zsh)',
    'autoload -U +X bashcompinit && bashcompinit',
    bashCompletion(program),
  ].join('\n');
}

/** `completion bash|zsh`: prints the completion script, generated from the command tree. */
export function completionCommand(loadAll: () => Promise<Command>): Command {
  return new Command('completion')
    .description('Print a shell completion script for pull-secret, generated from its commands and options.')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .addHelpText(
      'after',
      '\nbash: source <(pull-secret completion bash)   (or save it under /etc/bash_completion.d/)\nzsh:  ' +
        'source <(pull-secret completion zsh)\nExit codes: 0 printed, 2 usage error.',
    )
    .action(async (shell: 'bash' | 'zsh') => {
      const program = await loadAll();
      printOut(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    });
}
