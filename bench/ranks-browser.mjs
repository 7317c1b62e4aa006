// The browser figure of bench/ranks.sh (issue #29): examples/bench_ranks_web.rs, built for
// wasm32 with the app worker's profile and bound by wasm-bindgen into OUT (bench/ranks-browser.sh
// does both), run in headless Chromium: the paper grid's scoring and the ranks of one dataset of
// 15 conditions × 200 tasks at 10,000 resamples, single-threaded as in the scoring worker,
// medians of --runs. Prints the ranks as a share of the grid's scoring. Numbers only.
//
//   node bench/ranks-browser.mjs --out bench/out/ranks-web --grid GRID.jsonl [--runs 5]

import fs from 'node:fs';
import path from 'node:path';

import { launch, startServer } from '../e2e/lib.mjs';

function option(name, fallback) {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const out = path.resolve(option('out', 'bench/out/ranks-web'));
const runs = Number(option('runs', 5));
fs.copyFileSync(path.resolve(option('grid', 'bench/out/grid1.jsonl')), path.join(out, 'grid.jsonl'));
fs.writeFileSync(
  path.join(out, 'index.html'),
  `<!doctype html><meta charset="utf-8"><script type="module">
import init, { run } from './bench_ranks_web.js';
await init();
window.__bench = async (conditions, tasks, bootstrap, runs) => {
  const grid = new Uint8Array(await (await fetch('grid.jsonl')).arrayBuffer());
  return run(grid, conditions, tasks, bootstrap, runs);
};
window.__ready = true;
</script>`,
);
const server = await startServer({ root: out });
const browser = await launch();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  await page.waitForFunction(() => window.__ready === true, null, { timeout: 60_000 });
  const r = JSON.parse(await page.evaluate((n) => window.__bench(15, 200, 10_000, n), runs));
  const pct = (x) => ((100 * x) / r.grid_scoring_ms).toFixed(1);
  console.log(
    `browser (headless Chromium, 1 thread), B = 10000, median of ${runs}: paper grid (${r.rollouts} rollouts) ` +
      `scoring ${r.grid_scoring_ms} ms, of which its own ranks ${r.grid_ranks_ms} ms (${pct(r.grid_ranks_ms)}%); ` +
      `ranks of one dataset of 15 conditions x 200 tasks ${r.wide_ranks_ms} ms = ${pct(r.wide_ranks_ms)}% of the grid's scoring`,
  );
} finally {
  await browser.close();
  await server.close();
}
