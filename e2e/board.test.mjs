// Leaderboard review (#11): no failing request on a plain load; no source code in any tab's
// visible text; natural task order in the rollout browser.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import fs from 'node:fs';
import path from 'node:path';

import { cliReportBytes, computeAfter, download, ensureCli, loadExample, openApp, setSetting, tempDir, waitReady } from './lib.mjs';

/** A leaderboard (dataset lb: three agents, one method each; agent m3 skipped tasks 10, 11) and
 * a grid (dataset grid: model g with methods x, y; model h with method x). */
function leaderboardLines() {
  const lines = [];
  const push = (dataset, task, model, method, h) => {
    const steps = Array.from({ length: 1 + (h % 4) }, (_, s) => ({ tool: `f${s}`, args: { n: s }, ok: (h + s) % 5 !== 0 }));
    lines.push(JSON.stringify({ dataset, task_id: String(task), model, method, success: h % 3 !== 0, steps }));
  };
  for (const [i, [m, me]] of [['m1', 'p'], ['m2', 'q'], ['m3', 'r']].entries()) {
    for (let t = 0; t < 12; t++) if (!(m === 'm3' && t >= 10)) push('lb', t, m, me, (t * 7 + i * 13) % 11);
  }
  for (const [i, [m, me]] of [['g', 'x'], ['g', 'y'], ['h', 'x']].entries()) {
    for (let t = 0; t < 8; t++) push('grid', t, m, me, (t * 5 + i * 3) % 7);
  }
  return lines.join('\n') + '\n';
}

/** Picks a value in a select once the option exists (options follow earlier choices). */
async function pick(page, testid, value) {
  const select = page.getByTestId(testid);
  await select.locator(`option[value="${value}"]`).waitFor({ state: 'attached' });
  await select.selectOption(value);
}

const TABS = ['table', 'curves', 'checkpoints', 'outcomes', 'labels', 'cost', 'compare', 'rollouts'];

test('a plain app load makes no failing request (no report.json probe)', { timeout: 120_000 }, async (t) => {
  const failed = [];
  const { page, server, assertHealthy } = await openApp(t, {
    beforeGoto: ({ page }) => {
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
    },
  });
  await setSetting(page, 'settings-bootstrap', 200);
  await loadExample(page);
  await page.waitForTimeout(300);
  assert.deepEqual(failed, []);
  assert.ok(!server.requests.some((r) => r.url.includes('report.json')), 'no manifest request');
  await assertHealthy();
});

test('no visible text of any tab contains source code', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await loadExample(page);
  for (const name of TABS) {
    await page.getByTestId(`tab-${name}`).click();
    if (name === 'rollouts') await page.getByTestId('rollout-row').first().waitFor();
    await page.waitForTimeout(200);
    const text = await page.locator('body').innerText();
    for (const bad of ['=>', 'move |', 'on:click', '.update(', '|_|']) {
      assert.ok(!text.includes(bad), `tab ${name} shows ${JSON.stringify(bad)}: …${text.slice(Math.max(0, text.indexOf(bad) - 80), text.indexOf(bad) + 80)}…`);
    }
  }
  // The pager's buttons say Previous / Next and nothing else.
  const labels = await page.locator('.pager button').allInnerTexts();
  assert.deepEqual(labels, ['Previous', 'Next']);
  await assertHealthy();
});

test('paired comparison of any two conditions: Δ = CLI, task table, side by side, asked pair exported', { timeout: 180_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'leaderboard.jsonl');
  fs.writeFileSync(file, leaderboardLines());
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 500);
  await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(file));
  const cli = JSON.parse(cliReportBytes(['leaderboard.jsonl'], { cwd: dir, bootstrap: 500 }).toString('utf8'));
  await page.getByTestId('tab-compare').click();
  await pick(page, 'compare-dataset', 'lb');
  await pick(page, 'compare-model', 'm3');
  await pick(page, 'compare-a', 'r');
  await pick(page, 'compare-b-model', 'm1');
  await pick(page, 'compare-b', 'p');
  const table = page.getByTestId('compare-table');
  await table.waitFor();
  assert.equal(await table.getAttribute('data-kind'), 'conditions');
  // The report holds m1 − m3 (report order); the page shows m3 − m1.
  const p = cli.paired.find((q) => q.compare === 'conditions' && q.a.model === 'm1' && q.b.model === 'm3');
  assert.deepEqual([p.n_shared, p.only_a, p.only_b], [10, 2, 0]);
  const cells = await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())));
  const fmt = (x) => (x === null ? '–' : (0 - x).toFixed(2).replace(/^-(0\.00)$/, '$1'));
  assert.equal(cells[0][0], fmt(p.ter.delta));
  assert.equal(cells[3][0], fmt(p.final_success.delta));
  assert.equal(cells[0][1], `[${fmt(p.ter.ci[1])}, ${fmt(p.ter.ci[0])}]`);
  assert.match(await page.getByTestId('compare-caption').innerText(), /on the 10 tasks both ran \(0 only in A, 2 only in B/);
  assert.equal(await page.getByTestId('pair-counts').innerText(), '10 shared tasks; 0 only in A; 2 only in B.');
  // The four cells add up to the shared tasks; every listed task differs.
  const four = await page.getByTestId('pair-cells').locator('td[data-cell]').allInnerTexts();
  assert.equal(four.map(Number).reduce((a, b) => a + b, 0), 10);
  const listed = await page.getByTestId('pair-task').locator('td:first-child').allInnerTexts();
  assert.ok(listed.length > 0);
  const natural = [...listed].sort((a, b) => Number(a) - Number(b));
  assert.deepEqual(listed, natural, 'tasks in natural order');
  await page.getByTestId('pair-task').first().click();
  await page.getByTestId('side-by-side').waitFor();
  for (const side of ['A', 'B']) {
    await page.getByTestId('aligned').locator(`[data-testid="step"][data-side="${side}"]`).first().waitFor();
  }
  const firstErrors = await page.getByTestId('side-by-side').locator('[data-first-error="true"]').count();
  assert.ok(firstErrors >= 1, 'a differing task shows a first rejected step on at least one side');
  assert.match(await page.evaluate(() => location.hash), /task=/);

  // A pair that is not automatic (dataset grid has two methods under g): asked for, it is
  // computed and exported exactly as the CLI's --compare.
  await pick(page, 'compare-dataset', 'grid');
  await pick(page, 'compare-model', 'g');
  await pick(page, 'compare-a', 'y');
  await pick(page, 'compare-b-model', 'h');
  await pick(page, 'compare-b', 'x');
  await computeAfter(page, () => page.getByTestId('compare-request').click());
  await table.waitFor();
  assert.equal(await table.getAttribute('data-kind'), 'conditions');
  const exported = (await download(page, 'export-report-json')).bytes;
  const asked = cliReportBytes(['leaderboard.jsonl'], { cwd: dir, bootstrap: 500, extra: ['--compare', 'g', 'y', 'h', 'x'] });
  assert.ok(exported.equals(asked), 'the export equals prefix-exec score --compare g y h x');
  await assertHealthy();
});

/** The CSV export's lines as objects (no quoted fields in these fixtures). */
function parseCsv(text) {
  const [head, ...lines] = text.trimEnd().split('\n');
  const keys = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [keys[i], v])));
}

test('table exports follow the chosen layout and sort: leaderboard and paper CSV/LaTeX', { timeout: 180_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'leaderboard.jsonl');
  fs.writeFileSync(file, leaderboardLines());
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(file));
  const cli = JSON.parse(cliReportBytes(['leaderboard.jsonl'], { cwd: dir, bootstrap: 200 }).toString('utf8'));
  const key = (c) => `${c.dataset}|${c.model}|${c.method}`;
  const byKey = new Map(cli.conditions.map((c) => [key(c), c]));

  // Leaderboard layout, sorted by final success (descending).
  await page.getByTestId('tab-table').click();
  await page.getByTestId('table-layout').selectOption('leaderboard');
  await page.locator('[data-testid="main-table"][data-layout="leaderboard"]').waitFor();
  await page.getByTestId('sort-final_success').click();
  await page.locator('[data-testid="main-table"] th[aria-sort="descending"]').waitFor();
  const tableRows = await page.locator('[data-testid="main-table"] tr[data-model]').evaluateAll((rows) =>
    rows.map((r) => ({
      key: `${r.getAttribute('data-dataset')}|${r.getAttribute('data-model')}|${r.getAttribute('data-method')}`,
      bold: Object.fromEntries([...r.querySelectorAll('td[data-col]')].map((td) => [td.getAttribute('data-col'), td.classList.contains('max')])),
    })),
  );
  const tableOrder = tableRows.map((r) => r.key);
  const board = parseCsv((await download(page, 'export-csv')).bytes.toString('utf8'));
  assert.deepEqual(board.map(key), tableOrder, 'CSV rows in the order the table shows');
  assert.deepEqual([...new Set(board.map((r) => r.block))], [...new Set(cli.conditions.map((c) => c.dataset))], 'one block per dataset, in report order');
  for (const ds of ['lb', 'grid']) {
    const rows = board.filter((r) => r.dataset === ds);
    const values = rows.map((r) => Number(r.final_success));
    assert.deepEqual(values, [...values].sort((a, b) => b - a), `${ds}: descending final success`);
    for (const col of ['ter', 'mean_fed', 'auc_pec', 'rr', 'final_success']) {
      for (const r of rows) {
        const bold = tableRows.find((x) => x.key === key(r)).bold[col];
        assert.equal(r[`${col}_max`], bold ? '1' : '0', `${key(r)} ${col}_max as the table marks it`);
        assert.equal(r[col] === '' ? null : Number(r[col]), byKey.get(key(r))[col].value, `${key(r)} ${col} = CLI`);
      }
      if (rows.some((r) => r[col] !== '')) assert.ok(rows.some((r) => r[`${col}_max`] === '1'), `${ds} ${col}: a dataset maximum is marked`);
    }
  }
  const tex = (await download(page, 'export-latex')).bytes.toString('utf8');
  const texRows = tableOrder.filter((k) => k.startsWith('lb|')).map((k) => tex.indexOf(`${k.split('|')[1]} / ${k.split('|')[2]} &`));
  assert.ok(texRows.every((i) => i > 0), 'LaTeX has every leaderboard row');
  assert.deepEqual(texRows, [...texRows].sort((a, b) => a - b), 'LaTeX rows in the table order');
  assert.ok(tex.includes('\\textit{lb}') && !tex.includes('\\textit{lb / m1}'), 'LaTeX blocks are datasets');

  // The paper layout, report order: blocks per dataset × model, maxima per block.
  await page.getByTestId('sort-final_success').click();
  await page.getByTestId('sort-final_success').click();
  await page.locator('[data-testid="main-table"] th[aria-sort="descending"], [data-testid="main-table"] th[aria-sort="ascending"]').waitFor({ state: 'detached' });
  await page.getByTestId('table-layout').selectOption('paper');
  await page.locator('[data-testid="main-table"][data-layout="paper"]').waitFor();
  const paper = parseCsv((await download(page, 'export-csv')).bytes.toString('utf8'));
  assert.deepEqual(paper.map(key), cli.conditions.map(key), 'paper CSV in report order');
  assert.deepEqual(paper.map((r) => r.block), cli.conditions.map((c) => `${c.dataset} / ${c.model}`));
  // lb: every model is its own block, so every score is its block's maximum.
  for (const r of paper.filter((x) => x.dataset === 'lb')) {
    assert.equal(r.final_success_max, '1', `${key(r)}: alone in its block`);
  }
  const ptex = (await download(page, 'export-latex')).bytes.toString('utf8');
  assert.ok(ptex.includes('\\textit{lb / m1}') && ptex.includes('\\textit{grid / g}'), 'LaTeX blocks are dataset / model');
  await assertHealthy();
});

// ------------------------------------------------------------------------------------------
// Acceptance on real released runs (../shared/data/released-runs; skipped when absent): the
// tau-bench and tau2 airline runs plus the BFCL multi-turn base runs of gpt-oss-20b and
// glyphh-ada, whose result and score files have identical names.
// ------------------------------------------------------------------------------------------

const SHARED = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'shared', 'data', 'released-runs');
const REAL = [
  'tau-bench/gpt-4o-airline.json',
  'tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json',
  'bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/score/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_score.json',
];
const WANT_N = { 'gpt-4o': 200, 'claude-sonnet-4-5': 50, 'glyphh-ada-1.1': 200, 'openai_gpt-oss-20b': 200 };

/** Checks the leaderboard views of the real runs once they are computed. */
async function checkRealRuns(page) {
  const report = JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));
  const n = Object.fromEntries(report.conditions.map((c) => [c.model, c.n]));
  assert.deepEqual(n, WANT_N);
  const oss = report.conditions.find((c) => c.model === 'openai_gpt-oss-20b');
  assert.equal(oss.final_success.value, 0.515);
  const cross = report.paired.filter((p) => p.compare === 'conditions');
  assert.equal(cross.length, 1);
  assert.deepEqual([cross[0].a.model, cross[0].b.model, cross[0].n_shared], ['glyphh-ada-1.1', 'openai_gpt-oss-20b', 200]);
  // The leaderboard table: one block per dataset, every condition a row.
  await page.getByTestId('tab-table').click();
  assert.equal(await page.getByTestId('main-table').getAttribute('data-layout'), 'leaderboard');
  assert.equal(await page.locator('[data-testid="main-table"] tr.block-head').count(), 3);
  assert.equal(await page.locator('[data-testid="main-table"] tr[data-model]').count(), 4);
  // Overlaid curves: one plot per dataset; the BFCL plot has both models in its legend.
  await page.getByTestId('tab-curves').click();
  await page.getByTestId('pec-plot').first().waitFor();
  assert.equal(await page.getByTestId('pec-plot').count(), 3);
  const legends = await page.locator('figure.plot').evaluateAll((figs) => figs.map((f) => [...f.querySelectorAll('[data-testid="legend-item"]')].map((b) => b.textContent.trim())));
  assert.ok(legends.some((l) => l.length === 2 && l.includes('glyphh-ada-1.1 / fc') && l.includes('openai_gpt-oss-20b / fc')), JSON.stringify(legends));
  // The paired comparison of the two BFCL models.
  await page.getByTestId('tab-compare').click();
  await pick(page, 'compare-dataset', 'bfcl/multi_turn_base');
  await pick(page, 'compare-model', 'glyphh-ada-1.1');
  await pick(page, 'compare-a', 'fc');
  await pick(page, 'compare-b-model', 'openai_gpt-oss-20b');
  await pick(page, 'compare-b', 'fc');
  await page.getByTestId('compare-table').waitFor();
  assert.equal(await page.getByTestId('compare-table').getAttribute('data-kind'), 'conditions');
  await page.getByTestId('pair-counts').waitFor();
  assert.equal(await page.getByTestId('pair-counts').innerText(), '200 shared tasks; 0 only in A; 0 only in B.');
}

test('real runs in one plain pick (BFCL names collide): every condition, pairs, overlay, leaderboard', { timeout: 300_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 300);
  await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(REAL.map((r) => path.join(SHARED, r))), 240_000);
  await checkRealRuns(page);
  // Two picked files share a name: each rollout is re-read from its own file, not its
  // namesake (the first differing task is gpt-oss-20b's inference error, the first line of its
  // result file; read from glyphh's file of the same name it failed to parse).
  await page.getByTestId('pair-task').first().click();
  await page.getByTestId('aligned').waitFor();
  assert.equal(await page.getByTestId('side-by-side').locator('.error').count(), 0, await page.getByTestId('side-by-side').innerText());
  await checkAligned(page, REAL.filter((r) => r.startsWith('bfcl/')).map((r) => path.join(SHARED, r)));
  await assertHealthy();
});

/** The canonical rollouts of `files` (the CLI's `convert`), by model and task. */
function canonicalRollouts(files) {
  const out = execFileSync(ensureCli(), ['convert', ...files, '-o', '-'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
  const by = new Map();
  for (const line of out.toString('utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    by.set(`${r.model}\u001f${r.task_id}`, r);
  }
  return by;
}

/**
 * The aligned view of a task the two BFCL models part on (the comparison is open): every call
 * of each run once, in order, as the CLI converts it; each run's first rejected call marked at
 * its first error depth; the rows before the first difference the same calls; that row scrolled
 * into the rows' box.
 */
async function checkAligned(page, files) {
  const rollouts = canonicalRollouts(files);
  const differs = await page.getByTestId('pair-task-differs').allInnerTexts();
  const k = differs.findIndex((d) => d.includes('executability'));
  assert.ok(k >= 0, 'a task where one model stays executable and the other breaks');
  const task = await page.getByTestId('pair-task').nth(k).locator('td').first().innerText();
  await page.getByTestId('pair-task').nth(k).click();
  const aligned = page.getByTestId('aligned');
  await aligned.waitFor();
  const rows = await page.getByTestId('aligned-row').evaluateAll((trs) =>
    trs.map((tr) => ({
      kind: tr.dataset.kind,
      differs: tr.dataset.differs === 'true',
      first: tr.dataset.firstDifference === 'true',
      cells: ['A', 'B'].map((side) => {
        const td = tr.querySelector(`td[data-side="${side}"][data-testid="step"]`);
        return td && {
          depth: Number(td.dataset.depth),
          tool: td.querySelector('.tool').textContent,
          args: td.querySelector('.args').textContent,
          firstError: td.dataset.firstError === 'true',
        };
      }),
    })),
  );
  for (const [side, model] of [[0, 'glyphh-ada-1.1'], [1, 'openai_gpt-oss-20b']]) {
    const r = rollouts.get(`${model}\u001f${task}`);
    assert.ok(r, `${model} ran ${task}`);
    const shown = rows.map((row) => row.cells[side]).filter(Boolean);
    assert.deepEqual(shown.map((c) => c.depth), r.steps.map((_, i) => i + 1), `${model}: every call once, in order`);
    assert.deepEqual(shown.map((c) => c.tool), r.steps.map((s) => s.tool));
    const fed = r.steps.findIndex((s) => s.ok === false);
    assert.deepEqual(shown.filter((c) => c.firstError).map((c) => c.depth), fed < 0 ? [] : [fed + 1], `${model}: first rejected call`);
  }
  const first = rows.findIndex((r) => r.differs);
  assert.ok(first >= 0, 'the runs differ somewhere');
  assert.deepEqual(rows.map((r) => r.first), rows.map((_, i) => i === first));
  for (const r of rows.slice(0, first)) {
    assert.equal(r.kind, 'same');
    assert.deepEqual([r.cells[0].tool, r.cells[0].args], [r.cells[1].tool, r.cells[1].args]);
  }
  const box = await page.locator('.aligned-scroll').evaluate((el) => {
    const row = el.querySelector('tr.first-difference').getBoundingClientRect();
    const b = el.getBoundingClientRect();
    return { inside: row.top >= b.top - 1 && row.bottom <= b.bottom + 1 };
  });
  assert.ok(box.inside, 'the first difference is scrolled into view');
  assert.match(await page.getByTestId('aligned-summary').innerText(), /first rejected call|every call accepted|no tool call/);
  return { task, rows: rows.length, first };
}

test('real runs as a picked folder: BFCL files pair by their folders; repeated names show their folder', { timeout: 300_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const dir = await tempDir(t);
  const root = path.join(dir, 'runs');
  for (const rel of REAL) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.copyFileSync(path.join(SHARED, rel), path.join(root, rel));
  }
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 300);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 240_000);
  const folders = await page.getByTestId('file-folder').allInnerTexts();
  assert.ok(folders.some((f) => f.includes('gpt-oss-20b-vllm/')), JSON.stringify(folders));
  await checkRealRuns(page);
  await checkAligned(page, REAL.filter((r) => r.startsWith('bfcl/')).map((r) => path.join(root, r)));
  await assertHealthy();
});
