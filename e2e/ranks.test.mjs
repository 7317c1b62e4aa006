// The Ranks view and the cost frontier on real released runs (issue #29): the four tau-bench
// airline runs and the four tau2 airline runs of ../shared/data/released-runs (skipped when
// absent), picked as one folder. The page's ranks, flips and frontier flags equal the CLI's
// report on the same folder; the rank-interval plot, the bump chart and the frontier plots
// render (their PNG exports are real PNGs); a flip opens the paired comparison of its two
// conditions; the main table's rank column follows its sort metric.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import fs from 'node:fs';
import path from 'node:path';

import { ROOT, cliReportBytes, computeAfter, download, openApp, setSetting, tempDir } from './lib.mjs';

const SHARED = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');
const RUNS = [
  'tau-bench/gpt-4o-airline.json',
  'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-235B-A22B-Thinking-2507-FP8-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816084901.json',
  'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-8B-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0808092844.json',
  'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-gpt-4.1-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816022412.json',
  'tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json',
  'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-07-25T09-08-37.941596_airline_llm_agent_gpt-4o-mini_user_simulator_gpt-4o-mini.json',
  'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-12T21-04-49.372563_airline_llm_agent_Kimi-K2-Instruct_user_simulator_gpt-4o-20240806.json',
  'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-13T13-52-31.016323_airline_llm_agent_models--Qwen--Qwen3-32B_user_simulator_gpt-4o-20240806.json',
];
const B = 1000;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** A copy of the runs under `<dir>/airline/…`, as the folder the user picks. */
function airlineFolder(dir) {
  const root = path.join(dir, 'airline');
  for (const rel of RUNS) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.copyFileSync(path.join(SHARED, rel), path.join(root, rel));
  }
  return root;
}

async function pngOf(page, locator) {
  const { name, bytes } = await download(page, locator);
  assert.match(name, /\.png$/);
  assert.ok(bytes.subarray(0, 4).equals(PNG), `${name} is a PNG`);
  assert.ok(bytes.length > 5_000, `${name}: ${bytes.length} bytes, a drawn plot`);
  return bytes.length;
}

const label = (p) => `${p[0]} / ${p[1]}`;

test('Ranks and the cost frontier on a folder of released airline runs = the CLI; plots render; a flip opens the comparison', { timeout: 600_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const dir = await tempDir(t);
  const root = airlineFolder(dir);
  const { page, assertHealthy } = await openApp(t);
  await page.setViewportSize({ width: 1280, height: 900 });
  await setSetting(page, 'settings-bootstrap', B);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 540_000);
  const report = JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));
  const cli = JSON.parse(cliReportBytes(['airline'], { cwd: dir, bootstrap: B, seed: 0 }).toString('utf8'));
  assert.deepEqual(report.conditions, cli.conditions);
  assert.deepEqual(report.ranks, cli.ranks);
  assert.deepEqual(report.rank_divergence, cli.rank_divergence);
  assert.deepEqual(report.pareto, cli.pareto);
  const datasets = [...new Set(cli.ranks.map((r) => r.dataset))];
  assert.deepEqual(datasets, ['tau-bench/airline', 'tau2/airline']);
  const table = (dataset, metric) => cli.ranks.find((r) => r.dataset === dataset && r.metric === metric);

  // The main table's rank column: by final success unsorted, by TER once sorted by TER.
  await page.getByTestId('tab-table').click();
  const rankCells = () =>
    page.locator('[data-testid="main-table"] tr[data-model]').evaluateAll((rows) =>
      rows.map((tr) => [tr.dataset.dataset, tr.dataset.model, tr.dataset.method, tr.querySelector('td[data-col="rank"]')?.getAttribute('data-value')]),
    );
  const checkRanks = async (metric) => {
    const cells = await rankCells();
    assert.equal(cells.length, cli.conditions.length);
    for (const [dataset, model, method, value] of cells) {
      const c = table(dataset, metric).conditions.find((x) => x.model === model && x.method === method);
      assert.equal(value, String(c.rank), `${model} ${metric} rank`);
    }
  };
  await checkRanks('final_success');
  await page.getByTestId('sort-ter').click();
  await checkRanks('ter');
  await page.getByTestId('sort-ter').click();
  await page.getByTestId('sort-ter').click();

  // The Ranks view: one panel per ranked dataset.
  await page.getByTestId('tab-ranks').click();
  await page.getByTestId('rank-panel').first().waitFor();
  assert.deepEqual(await page.getByTestId('rank-panel').evaluateAll((ps) => ps.map((p) => p.dataset.dataset)), datasets);
  const readRows = (panel) =>
    panel.getByTestId('rank-row').evaluateAll((rows) => rows.map((r) => ({ model: r.dataset.model, method: r.dataset.method, rank: Number(r.dataset.rank), lo: Number(r.dataset.lo), hi: Number(r.dataset.hi) })));
  for (const metric of ['final_success', 'ter', 'auc_pec']) {
    await page.getByTestId('rank-metric').selectOption(metric);
    for (const dataset of datasets) {
      const panel = page.locator(`[data-testid="rank-panel"][data-dataset="${dataset}"]`);
      await panel.locator(`[data-testid="rank-table"][data-metric="${metric}"]`).waitFor();
      const rows = await readRows(panel);
      const want = table(dataset, metric).conditions
        .map((c, i) => ({ c, i }))
        .sort((a, b) => a.c.rank - b.c.rank || a.i - b.i)
        .map(({ c }) => ({ model: c.model, method: c.method, rank: c.rank, lo: c.rank_lo, hi: c.rank_hi }));
      assert.deepEqual(rows, want, `${dataset} by ${metric}`);
    }
  }
  await page.getByTestId('rank-metric').selectOption('final_success');

  // τ_b in one sentence, and the flips, per dataset: the report's.
  let flipToOpen = null;
  for (const dataset of datasets) {
    const panel = page.locator(`[data-testid="rank-panel"][data-dataset="${dataset}"]`);
    const d = cli.rank_divergence.find((x) => x.dataset === dataset && x.b === 'ter');
    const k = table(dataset, 'ter').conditions.length;
    const sentence = await panel.getByTestId('rank-sentence').innerText();
    assert.match(sentence, new RegExp(`^By final success and by TER, \\d+ of ${(k * (k - 1)) / 2} pairs? (is|are) in the same order`), sentence);
    if (d.discordant.length) assert.ok(sentence.includes(` and ${d.discordant.length} in opposite orders`), sentence);
    if (d.kendall_tau_b.value !== null) assert.ok(sentence.includes('τ_b '), sentence);
    t.diagnostic(`${dataset}: ${sentence}`);
    const flips = await panel.getByTestId('rank-flip').evaluateAll((bs) => bs.map((b) => [b.textContent.trim(), b.dataset.significant]));
    const significantFirst = [...d.discordant.filter((p) => p.significant), ...d.discordant.filter((p) => !p.significant)];
    assert.deepEqual(
      flips,
      significantFirst.map((p) => [`${label(p.ahead_on_success)} ahead on final success, ${label(p.ahead_on_ter)} ahead on TER`, String(p.significant)]),
    );
    if (!flipToOpen && significantFirst.length) flipToOpen = { dataset, pair: significantFirst[0] };
    // Both plots render and export as PNGs.
    const rankPng = await pngOf(page, panel.getByTestId('export-rank-png'));
    const bumpPng = await pngOf(page, panel.getByTestId('export-bump-png'));
    t.diagnostic(`${dataset}: rank plot PNG ${rankPng} bytes, bump chart PNG ${bumpPng} bytes`);
  }

  // A flip opens the paired comparison of its two conditions.
  assert.ok(flipToOpen, 'the released airline runs have at least one flip');
  const { dataset, pair } = flipToOpen;
  const panel = page.locator(`[data-testid="rank-panel"][data-dataset="${dataset}"]`);
  await panel.getByTestId('rank-flip').first().click();
  await page.locator('[data-testid="tab-compare"][aria-selected="true"]').waitFor();
  assert.equal(await page.getByTestId('compare-dataset').inputValue(), dataset);
  assert.equal(await page.getByTestId('compare-model').inputValue(), pair.ahead_on_success[0]);
  assert.equal(await page.getByTestId('compare-a').inputValue(), pair.ahead_on_success[1]);
  assert.equal(await page.getByTestId('compare-b-model').inputValue(), pair.ahead_on_ter[0]);
  assert.equal(await page.getByTestId('compare-b').inputValue(), pair.ahead_on_ter[1]);
  await page.getByTestId('compare-caption').waitFor();
  const caption = await page.getByTestId('compare-caption').innerText();
  assert.ok(caption.startsWith(`A = ${label(pair.ahead_on_success)}, B = ${label(pair.ahead_on_ter)}`), caption);
  await page.getByTestId('pair-counts').waitFor();

  // The cost frontier: per dataset with costs, the frontier members are the report's flags.
  await page.getByTestId('tab-cost').click();
  const fields = [...new Set(cli.pareto.map((p) => p.cost))];
  assert.ok(fields.length > 0, 'the tau2 runs carry costs');
  assert.deepEqual(await page.getByTestId('cost-field').locator('option').evaluateAll((os) => os.map((o) => o.value)), fields);
  for (const field of fields) {
    await page.getByTestId('cost-field').selectOption(field);
    const entries = cli.pareto.filter((p) => p.cost === field);
    await page.getByTestId('frontier-plot').first().waitFor();
    assert.equal(await page.getByTestId('frontier-plot').count(), entries.length);
    const lists = await page.getByTestId('frontier-list').evaluateAll((ls) =>
      ls.map((l) => [l.dataset.metric, [...l.querySelectorAll('[data-testid="frontier-member"]')].map((m) => `${m.dataset.model} / ${m.dataset.method}`)]),
    );
    assert.deepEqual(
      lists,
      entries.map((e) => [e.metric, e.conditions.filter((c) => c.pareto).map((c) => `${c.model} / ${c.method}`)]),
      field,
    );
  }
  const frontierPng = await pngOf(page, page.getByTestId('export-frontier-png').first());
  t.diagnostic(`frontier PNG ${frontierPng} bytes; cost fields ${fields.join(', ')}`);
  await assertHealthy();
});
