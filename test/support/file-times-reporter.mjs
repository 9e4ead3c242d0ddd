// A node:test reporter that prints each test file's time, longest first, and the failed tests: what
// `npm run test:times` shows to find the files worth splitting or sharing a server in.
//   node --import tsx --test --test-reporter=./test/support/file-times-reporter.mjs <files>
// A file's time is the sum of its top-level tests' durations (its hooks included), so it does not
// count the module loading, and it reads the same whether files run one at a time or concurrently.

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* fileTimes(source) {
  /** @type {Map<string, number>} */
  const ms = new Map();
  const failed = [];
  for await (const { type, data } of source) {
    if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && data.file) {
      ms.set(data.file, (ms.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
    if (type === 'test:fail' && data.details?.error?.failureType !== 'subtestsFailed') {
      failed.push(`${data.file ?? '?'}: ${data.name}`);
    }
  }
  const cwd = `${process.cwd()}/`;
  const rows = [...ms].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, t]) => sum + t, 0);
  for (const [file, t] of rows) yield `${(t / 1000).toFixed(1).padStart(7)} s  ${file.replace(cwd, '')}\n`;
  yield `${(total / 1000).toFixed(1).padStart(7)} s  total of ${rows.length} files\n`;
  for (const line of failed) yield `FAILED ${line.replace(cwd, '')}\n`;
}
