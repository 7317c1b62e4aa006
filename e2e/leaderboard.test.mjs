// Whole released leaderboards (#21): the shared folder of real released runs — the complete
// gpt-4.1 ToolSandbox run (1,032 scenarios, 2,065 files), partial ToolSandbox runs, tau-bench
// runs with crashed episodes, tau2, BFCL, Inspect logs and files of formats the app does not
// read — picked as ONE folder with "Choose a folder…". Every condition has the N its benchmark
// reports, crashed episodes stay in their domain and are counted, no two runs merge, the file
// list shows a ToolSandbox run as one entry, and the report equals the CLI's on the same folder.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import fs from 'node:fs';
import path from 'node:path';

import { ROOT, cliReportBytes, computeAfter, download, openApp, setSetting } from './lib.mjs';

const DATA = path.resolve(ROOT, '..', 'shared', 'data');
const FOLDER = 'released-runs';

/** (dataset, model) → [n, crashed], as the benchmarks' own files report them. */
const EXPECTED = {
  'tau-bench/retail|claude-4-sonnet-thinking-off': [115, 20],
  'tau-bench/retail|o4-mini-high': [115, 0],
  'tau-bench/airline|Qwen3-8B': [50, 3],
  'tau-bench/airline|Qwen3-235B-A22B-Thinking-2507-FP8': [50, 4],
  'tau-bench/airline|gpt-4.1': [50, 0],
  'tau-bench/airline|gpt-4o': [200, 0],
  'toolsandbox|openai/gpt-4.1': [1032, 0],
  'bfcl/multi_turn_base|openai_gpt-oss-20b': [200, 4],
  'bfcl/multi_turn_base|glyphh-ada-1.1': [200, 0],
  'tau2/airline|claude-sonnet-4-5': [50, 0],
};

test('the released runs picked as one folder: Ns, crashes in their domain, runs apart, grouped files, = CLI', { timeout: 600_000 }, async (t) => {
  if (!fs.existsSync(path.join(DATA, FOLDER))) return t.skip(`shared data not found at ${DATA}`);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(path.join(DATA, FOLDER)), 540_000);
  const report = JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));

  const byKey = new Map(report.conditions.map((c) => [`${c.dataset}|${c.model}`, c]));
  for (const [key, [n, crashed]] of Object.entries(EXPECTED)) {
    const c = byKey.get(key);
    assert.ok(c, `a condition ${key}`);
    assert.deepEqual([c.n, c.crashed], [n, crashed], key);
  }
  // No dataset of crashed episodes apart from their domain; no shared unknown model.
  assert.ok(!report.conditions.some((c) => c.dataset === 'tau-bench'), 'no phantom tau-bench dataset');
  assert.ok(!report.conditions.some((c) => c.model === 'unknown-model'), 'no unknown-model condition');
  // Each ToolSandbox run is a condition of its own.
  const sandbox = report.conditions.filter((c) => c.dataset === 'toolsandbox').map((c) => c.model).sort();
  assert.equal(sandbox.length, 4, JSON.stringify(sandbox));

  // The table shows the crashed counts.
  const crashedCell = page.locator('tr[data-model="claude-4-sonnet-thinking-off"] td[data-col="crashed"]');
  assert.equal(await crashedCell.getAttribute('data-value'), '20');

  // The file list: the complete ToolSandbox run is one entry, expandable to its files.
  const run = page.getByTestId('file-group').filter({ hasText: 'ToolSandbox run · openai/gpt-4.1' });
  assert.equal(await run.count(), 1);
  assert.equal(await run.getAttribute('data-files'), '2065');
  assert.match(await run.getByTestId('file-group-summary').innerText(), /1,032 scenarios · 2,065 files · \d+\.\d MB/);
  assert.equal(await run.getByTestId('file-item').count(), 0, 'files listed only when opened');
  await run.getByTestId('file-group-toggle').click();
  assert.equal(await run.getByTestId('file-item').count(), 500, 'the first 500 files, and a count of the rest');
  const sizes = await page.getByTestId('file-list').locator('.file-size').allInnerTexts();
  assert.ok(sizes.length > 0 && !sizes.some((s) => s === '0.0 MB'), JSON.stringify(sizes.slice(0, 5)));
  // The report starts within the first screen: the list scrolls inside its panel.
  const tableTop = await page.getByTestId('main-table').evaluate((e) => e.getBoundingClientRect().top);
  const listHeight = await page.getByTestId('file-list').evaluate((e) => e.getBoundingClientRect().height);
  assert.ok(listHeight < 0.5 * (await page.evaluate(() => window.innerHeight)) + 1, `file list ${listHeight}px high`);
  t.diagnostic(`main table top at ${tableTop}px`);

  // The CLI on the same folder (same relative names): the same conditions and numbers.
  const cli = JSON.parse(cliReportBytes([FOLDER], { cwd: DATA, bootstrap: 200, seed: 0 }).toString('utf8'));
  assert.deepEqual(report.conditions, cli.conditions);
  assert.deepEqual(report.paired, cli.paired);
  await assertHealthy();
});
