// Browser benchmark: the paper-sized synthetic grid (6,768 rollouts) scored with 10,000
// resamples in headless Chromium, against the native CLI on the same file.
//
//   node bench/browser.mjs [--runs 3] [--file static/examples/synthetic-grid.jsonl] [--bootstrap 10000]
//                          [--workers 1,2]
//
// Each pool size in --workers (default: 1 and the machine's cores, at most 8) is run --runs
// times; the report is the same bytes for any pool size, only the time changes.
//
// Per run (a fresh browser profile each time, so the worker's code is fetched and compiled
// anew): the time from picking the file to the main table's data-state="ready" (measured in the
// page, from the file input's change event to the DOM change; and as seen from Node around
// setInputFiles), the worker's own compute time (the progress text "Done in N ms"), and the
// longest main-thread long task from the pick to 500 ms after ready (PerformanceObserver
// 'longtask', which reports tasks > 50 ms; 0 when none). Then the native CLI
// (target/release/prefix-exec score FILE --json /dev/null), median of 3. Prints numbers only.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { EXAMPLE, ROOT, launch, setSetting, startServer, waitMounted } from '../e2e/lib.mjs';

function option(name, fallback) {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const runs = Number(option('runs', 3));
const cores = (await import('node:os')).cpus().length;
const pools = [...new Set(option('workers', `1,${Math.min(cores, 8)}`).split(',').map(Number))];
const file = path.resolve(option('file', EXAMPLE));
const bootstrap = Number(option('bootstrap', 10_000));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Installed before any page script: long tasks, and the moments of the pick and of "ready".
function initScript() {
  window.__bench = { longtasks: [], picked: null, ready: null };
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__bench.longtasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    window.__bench.longtasks = null; // not supported
  }
  document.addEventListener(
    'change',
    (e) => {
      if (e.target?.getAttribute?.('data-testid') === 'file-input') window.__bench.picked = performance.now();
    },
    true,
  );
  const check = () => {
    if (window.__bench.picked !== null && window.__bench.ready === null) {
      if (document.querySelector('[data-testid="main-table"][data-state="ready"]')) window.__bench.ready = performance.now();
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
}

async function browserRun(server, workers) {
  const browser = await launch();
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.addInitScript(initScript);
    await page.goto(server.url);
    await waitMounted(page);
    await setSetting(page, 'settings-bootstrap', bootstrap);
    await setSetting(page, 'settings-workers', workers);
    // Let the pool's workers start (the page starts them as soon as the setting changes).
    await page.waitForTimeout(1000);
    const t0 = performance.now();
    await page.getByTestId('file-input').setInputFiles(file);
    await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor({ timeout: 600_000 });
    const wall = performance.now() - t0;
    const text = await page.getByTestId('progress').innerText();
    const m = /Done in (\d+(?:\.\d+)?) ms(?: on (\d+) workers)?/.exec(text);
    if (!m) throw new Error(`unexpected progress text: ${text}`);
    await page.waitForTimeout(500);
    const b = await page.evaluate(() => window.__bench);
    const tasks = b.longtasks === null ? null : b.longtasks.filter((x) => x.start >= b.picked);
    return {
      page_ms: b.ready - b.picked,
      wall_ms: wall,
      worker_ms: Number(m[1]),
      workers: Number(m[2] ?? 1),
      longtask_max_ms: tasks === null ? NaN : Math.max(0, ...tasks.map((x) => x.duration)),
      longtasks: tasks === null ? NaN : tasks.length,
      load_longtask_max_ms: b.longtasks === null ? NaN : Math.max(0, ...b.longtasks.filter((x) => x.start < b.picked).map((x) => x.duration)),
    };
  } finally {
    await browser.close();
  }
}

function nativeRuns(n) {
  const cli = path.join(ROOT, 'target', 'release', 'prefix-exec');
  if (!fs.existsSync(cli)) {
    const r = spawnSync('cargo', ['build', '--release', '--bin', 'prefix-exec'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error('cargo build --release --bin prefix-exec failed');
  }
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = spawnSync(cli, ['score', file, '--json', '/dev/null', '--bootstrap', String(bootstrap), '--quiet'], { stdio: 'ignore' });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${cli} exited with ${r.status}`);
  }
  return times;
}

const fmt = (x) => (Number.isFinite(x) ? x.toFixed(0).padStart(7) : '    n/a');
const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
console.log(`# ${path.relative(ROOT, file)}: ${lines} rollouts, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB; bootstrap ${bootstrap}`);
console.log(`# ${runs} browser runs (fresh profile each), headless ${process.env.CHROMIUM ?? '/usr/bin/chromium'}; machine: ${(await import('node:os')).cpus().length} cores`);
const server = await startServer();
const results = new Map();
try {
  console.log('workers  run  pick→ready(page)  pick→ready(node)  worker compute  longest longtask  longtasks  (load longtask)');
  for (const workers of pools) {
    const mine = [];
    for (let i = 0; i < runs; i++) {
      const r = await browserRun(server, workers);
      mine.push(r);
      console.log(
        `${String(r.workers).padStart(7)}  ${String(i + 1).padStart(3)}  ${fmt(r.page_ms)} ms        ${fmt(r.wall_ms)} ms        ${fmt(r.worker_ms)} ms      ${fmt(r.longtask_max_ms)} ms        ${String(r.longtasks).padStart(3)}      ${fmt(r.load_longtask_max_ms)} ms`,
      );
    }
    results.set(workers, mine);
  }
} finally {
  await server.close();
}
const native = nativeRuns(3);
console.log('# medians');
for (const [workers, mine] of results) {
  const med = (k) => median(mine.map((r) => r[k]));
  console.log(`${workers} worker(s): pick→ready (page clock) ${fmt(med('page_ms'))} ms, (node clock) ${fmt(med('wall_ms'))} ms, worker compute ${fmt(med('worker_ms'))} ms, longest main-thread task ${fmt(med('longtask_max_ms'))} ms; compute / native ${(med('worker_ms') / median(native)).toFixed(2)} ×`);
}
console.log(`native CLI (release, all cores), median of 3 ${fmt(median(native))} ms   [${native.map((x) => x.toFixed(0)).join(', ')}]`);
