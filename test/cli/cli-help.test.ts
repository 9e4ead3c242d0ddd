// Help pages list names and their descriptions in columns: every description of a list starts in the
// same column, however long the longest name is (the tables come from one renderer, src/util/table.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { renderTable } from '../../src/util/table.js';

/** The full help text of `command`, including the text added after the options. */
function helpOf(command: Command): string {
  let text = '';
  command.exitOverride().configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  command.outputHelp();
  return text;
}

/** The lines of the section that starts after `title`, up to the next blank line. */
function section(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.findIndex((l) => l.startsWith(title));
  assert.ok(start >= 0, `no "${title}" in the help`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The column where each line's second field starts (after the name and the run of spaces). */
const descriptionColumns = (lines: readonly string[]) =>
  lines.map((line) => /^ +\S+ +/.exec(line)?.[0].length ?? -1);

test('adapter --help: every environment override description starts in one column', async () => {
  const { adapterCommand } = await import('../../src/cli/adapter.js');
  const rows = section(helpOf(adapterCommand()), 'Environment overrides');
  const names = rows.map((line) => line.trim().split(/ +/)[0] ?? '');
  assert.ok(
    names.some((name) => name.length > 26),
    'some variable names are longer than 26 characters',
  );
  const columns = descriptionColumns(rows);
  assert.deepEqual(new Set(columns).size, 1, rows.filter((_, i) => columns[i] !== columns[0]).join('\n'));
  const longest = Math.max(...names.map((n) => n.length));
  assert.equal(columns[0], 2 + longest + 2, 'two spaces after the longest name');
});

test('run-job --help: every environment variable description starts in one column', async () => {
  const { runJobCommand } = await import('../../src/cli/run-job.js');
  const rows = section(helpOf(runJobCommand()), 'Environment:');
  assert.ok(rows.length > 5);
  assert.equal(new Set(descriptionColumns(rows)).size, 1);
});

test('the table renderer sizes each column to its widest cell and pads no last cell', () => {
  assert.equal(
    renderTable(
      [
        ['a', 'one'],
        ['long name', 'two', 'x'],
        ['b', ''],
      ],
      { header: ['NAME', 'WHAT'] },
    ),
    ['NAME       WHAT', 'a          one', 'long name  two   x', 'b'].join('\n'),
  );
  assert.equal(renderTable([['k:', 'v']], { separator: ' ', indent: '  ', minWidths: [5] }), '  k:    v');
  assert.equal(renderTable([]), '');
});
