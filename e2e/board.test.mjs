// Leaderboard review (#11): no failing request on a plain load; no source code in any tab's
// visible text; natural task order in the rollout browser.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import fs from 'node:fs';
import path from 'node:path';

import { cliReportBytes, computeAfter, download, loadExample, openApp, setSetting, tempDir, waitReady } from './lib.mjs';

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
  for (const side of ['side-A', 'side-B']) {
    await page.getByTestId(side).locator('[data-testid="step"]').first().waitFor();
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
