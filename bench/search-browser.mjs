// The browser figure of bench/search.sh (issue #30): the 15-run ToolSandbox leaderboard picked
// as one folder in headless Chromium (the app's release build in dist/), then, once the report
// is ready, the time until the worker's search index is built in the background (it reads every
// rollout's texts once: the first search waits for it), then a few searches from the Rollouts
// tab's search box, each timed from the click to the hits on screen (the page's own clock, the
// `data-ms` of its answer: the worker matches the index). Numbers only; nothing asserted.
//
//   node bench/search-browser.mjs --folder bench/out/leaderboard-v3-x15 [--runs 3]
//   node bench/search-browser.mjs --file bench/out/leaderboard-v3-x15.zip   (an archive dropped)

import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { launch, setSetting, startServer, waitMounted } from '../e2e/lib.mjs';

function option(name, fallback) {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const archive = option('file', null);
const folder = path.resolve(option('folder', 'bench/out/leaderboard-v3-x15'));
const runs = Number(option('runs', 3));
const QUERIES = [
  ['low battery|cellular', 'all'],
  ['^send_message', 'tool'],
  ['PermissionError', 'error'],
  ['e', 'all'],
];

const server = await startServer();
const browser = await launch();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(`${server.url}#tab=rollouts`);
  await waitMounted(page);
  await setSetting(page, 'settings-bootstrap', 0);
  const t0 = performance.now();
  if (archive) await page.getByTestId('file-input').setInputFiles(path.resolve(archive));
  else await page.getByTestId('folder-input').setInputFiles(folder);
  await page.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, {
    timeout: 1_800_000,
    polling: 200,
  });
  const rollouts = await page.evaluate(() => document.querySelector('[data-testid="progress"]')?.innerText ?? '');
  const ready = performance.now();
  console.log(`# pick→ready ${((ready - t0) / 1000).toFixed(1)} s (${rollouts.trim().split('\n')[0]})`);
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="search-index"]')?.getAttribute('data-state');
    return s === 'ready' || s === 'too-large';
  }, null, { timeout: 1_800_000, polling: 100 });
  const index = page.getByTestId('search-index');
  console.log(
    `# search index built ${((performance.now() - ready) / 1000).toFixed(1)} s after ready ` +
      `(the worker's own figure: ${((await index.getAttribute('data-ms')) / 1000).toFixed(1)} s): ${(await index.innerText()).trim()}`,
  );
  for (const [pattern, field] of QUERIES) {
    const times = [];
    let line = '';
    for (let i = 0; i < runs; i++) {
      await page.getByTestId('search-pattern').fill(pattern);
      await page.getByTestId('search-field').selectOption(field);
      const before = await page.getByTestId('search-count').getAttribute('data-seq').catch(() => null);
      const start = performance.now();
      await page.getByTestId('search-run').click();
      await page.waitForFunction(
        (b) => {
          const el = document.querySelector('[data-testid="search-count"]');
          const err = document.querySelector('[data-testid="search-error"]');
          return err || (el && !document.querySelector('[data-testid="search-run"]').disabled && el.getAttribute('data-seq') !== b);
        },
        before,
        { timeout: 600_000, polling: 20 },
      );
      const wall = performance.now() - start;
      const count = page.getByTestId('search-count');
      times.push(Number(await count.getAttribute('data-ms')));
      const [worker, read] = [await count.getAttribute('data-worker-ms'), await count.getAttribute('data-read-ms')];
      line = `${await count.getAttribute('data-total')} hits; click→hits shown ${(wall / 1000).toFixed(2)} s; in the worker ${(worker / 1000).toFixed(2)} s, of which reading rollouts back ${(read / 1000).toFixed(2)} s`;
    }
    times.sort((a, b) => a - b);
    console.log(
      `browser search ${JSON.stringify(pattern)} --field ${field}: median ${(times[Math.floor(times.length / 2)] / 1000).toFixed(2)} s ` +
        `(of ${runs}: ${times.map((t) => (t / 1000).toFixed(2)).join(', ')} s), last: ${line}`,
    );
  }
} finally {
  await browser.close();
  await server.close();
}
