// Preloaded into benchmarked child processes (node --import): records the process's peak RSS
// (getrusage maxrss, KiB) into BENCH_RSS_FILE on exit. Bench-only; never loaded by the service.
import { appendFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.BENCH_RSS_FILE;
  if (file) appendFileSync(file, `${process.resourceUsage().maxRSS}\n`);
});
