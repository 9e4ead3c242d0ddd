/** How {@link renderTable} lays out its columns. */
interface TableLayout {
  /** A first line of column titles, sized with the cells. */
  readonly header?: readonly string[];
  /** Between two columns (default two spaces). */
  readonly separator?: string;
  /** Before every line (default none). */
  readonly indent?: string;
  /** The least width of each column, for a column that keeps its width whatever is shown. */
  readonly minWidths?: readonly number[];
}

/**
 * Left-aligned text columns, each as wide as its widest cell (header included), one line a row; the
 * last cell of a line is not padded and no line ends in spaces. Every CLI table and help page uses
 * it, so columns line up whatever the longest name is.
 */
export function renderTable(rows: readonly (readonly string[])[], layout: TableLayout = {}): string {
  const { header, separator = '  ', indent = '', minWidths = [] } = layout;
  const lines = header === undefined ? rows : [header, ...rows];
  const columns = Math.max(0, ...lines.map((cells) => cells.length));
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(minWidths[i] ?? 0, ...lines.map((cells) => (cells[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join(separator);
  return lines.map((cells) => `${indent}${line(cells)}`.trimEnd()).join('\n');
}
