import { configEnv } from '../stores/config-env.js';
import { HYPERFLEET_BROKER_ENV } from '../config/hyperfleet-broker.js';
import { HYPERFLEET_ENV } from '../config/hyperfleet-env.js';

/** The command whose help lists every setting, its key and its environment variable. */
const SETTINGS_HELP = 'pull-secret adapter --help';

/** A required section reported whole when it is missing: the key that makes it. */
const SECTION_KEY: Readonly<Record<string, string>> = {
  hyperfleetApi: 'hyperfleetApi.baseUrl',
  broker: 'broker.type',
};

/** `broker.rabbitmq.exchange_type` (hyperfleet-broker's key) → `broker.exchangeType` (ours). */
function ourBrokerPath(libraryPath: string): string {
  const flat = libraryPath.replace(/^broker\.(rabbitmq|googlepubsub)\./, 'broker.');
  return flat.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The environment variables that set the config key `path`: ours first, then HyperFleet's
 * (`HYPERFLEET_*`, hyperfleet-broker's `BROKER_*`). Empty for a key only the file sets.
 */
function variablesFor(path: string): string[] {
  const ours = Object.entries(configEnv())
    .filter(([, v]) => v.path === path)
    .map(([name]) => name);
  const hyperfleet = Object.entries(HYPERFLEET_ENV)
    .filter(([, p]) => p === path)
    .map(([name]) => name);
  const broker = Object.entries(HYPERFLEET_BROKER_ENV)
    .filter(([, p]) => ourBrokerPath(p) === path)
    .map(([name]) => name);
  return [...ours, ...hyperfleet, ...broker];
}

/**
 * One problem line (`path: rule`, as `issueLines` gives it) in words a user can act on: a value that
 * is missing says so, and every line names the key and the variables that set it.
 */
function explainProblem(line: string): string {
  const at = line.indexOf(': ');
  if (at < 0) return line;
  const path = line.slice(0, at);
  const rule = line.slice(at + 2);
  const missing = /received undefined$/.test(rule);
  const key = missing ? (SECTION_KEY[path] ?? path) : path;
  const variables = variablesFor(key);
  const inFile = `set ${key} in the config file`;
  const where = variables.length > 0 ? `${inFile}, or ${variables.join(' or ')}` : inFile;
  return missing ? `${key}: missing: ${where}` : `${line} (${where})`;
}

/** The source of a configuration read without a file. */
const NO_FILE =
  'no --config FILE given: defaults and environment variables only; give --config or set the variables below';

/**
 * The message of an invalid adapter configuration: where it came from (the file, or the environment
 * alone), every problem explained, and the command that lists every setting.
 */
export function adapterConfigMessage(problems: readonly string[], file: string | undefined): string {
  const source = file === undefined ? NO_FILE : `config file ${file}`;
  const lines = problems.map((p) => `  ${explainProblem(p)}`);
  const all = `Every setting, its key and its environment variable: ${SETTINGS_HELP}`;
  return [`invalid adapter configuration (${source}):`, ...lines, all].join('\n');
}
