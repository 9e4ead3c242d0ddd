import { Option } from 'commander';
import { renderTable } from '../util/table.js';

/** The output formats of every command that prints data, as kubectl names them. */
const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The `-o, --output` option, the same on every command that prints data: table (the default
 * unless `fallback` says otherwise), wide (table with every column), json, yaml.
 */
export function outputOption(fallback: OutputFormat = 'table'): Option {
  return new Option('-o, --output <format>', 'table, wide (every column), json or yaml')
    .choices(OUTPUT_FORMATS)
    .default(fallback);
}

/**
 * `data` in `format`: json (two-space indented, or one line with `oneLine`: the commands that print
 * one record, read by scripts line by line) and yaml of the same object, or the command's own table
 * text (`table(true)` for wide). The YAML library is loaded only for yaml.
 */
export async function render(
  format: OutputFormat,
  data: unknown,
  table: (wide: boolean) => string,
  options: { oneLine?: boolean } = {},
): Promise<string> {
  if (format === 'json')
    return options.oneLine === true ? JSON.stringify(data) : JSON.stringify(data, null, 2);
  if (format === 'yaml') {
    const { stringifyYaml } = await import('../config/yaml-parser.js');
    return stringifyYaml(data).trimEnd();
  }
  return table(format === 'wide');
}

/** The table form of a flat record: one `KEY  value` line per field (a nested value as compact JSON). */
export function factsTable(record: Readonly<Record<string, unknown>>): string {
  const rows = Object.entries(record).map(
    ([key, value]) =>
      [
        key.toUpperCase().replaceAll('_', ' '),
        typeof value === 'string' ? value : JSON.stringify(value),
      ] as const,
  );
  return renderTable(rows);
}
