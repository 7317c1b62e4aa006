// Inspect AI logs in the browser: two .eval archives of different models dropped at once (read
// by random access from the File in the worker), the main table equal to the CLI's report, the
// rollout browser showing an Inspect tool error, and the two models compared in the Paired
// comparison tab.
//
// The comparison tab compares two methods of one model (an any-two-conditions comparison is not
// on this branch): the two files are given one shared model name and their model as the method,
// through each file's options, and the table is checked against the CLI's report of the same
// rollouts converted with the same names.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';

import {
  ROOT,
  cliReportBytes,
  compareTableToReport,
  computeAfter,
  ensureCli,
  openApp,
  readMainTable,
  setSetting,
  tempDir,
  waitReady,
} from './lib.mjs';

const B = 1000;
const FIXTURES = path.join(ROOT, 'tests', 'fixtures', 'import', 'inspect');
const M1 = path.join(FIXTURES, 'log.eval');
const M2 = path.join(FIXTURES, 'log-m2.eval');
const DATASET = 'demo/arith (arith-ds)';

async function pick(page, testid, value) {
  const select = page.getByTestId(testid);
  await select.locator(`option[value="${value}"]`).waitFor({ state: 'attached' });
  await select.selectOption(value);
  assert.equal(await select.inputValue(), value);
}

test('two .eval logs of different models: table = CLI, tool errors shown, models compared', { timeout: 180_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await page.getByTestId('file-input').setInputFiles([M1, M2]);
  await waitReady(page);

  // The main table: one row per model, equal to the CLI's report on the same two files.
  const report = JSON.parse(
    cliReportBytes([path.basename(M1), path.basename(M2)], { cwd: FIXTURES, bootstrap: B, seed: 0 }).toString('utf8'),
  );
  assert.deepEqual(
    report.conditions.map((c) => [c.dataset, c.model, c.method]),
    [
      [DATASET, 'openai/m1', 'basic_agent_loop'],
      [DATASET, 'openai/m2', 'basic_agent_loop'],
    ],
  );
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  const cells = compareTableToReport(await readMainTable(page), report);
  t.diagnostic(`${cells} main-table cells equal the CLI's`);
  // The import notes are listed (the self-check of each log among them).
  const problems = await page.getByTestId('error-item').allTextContents();
  assert.ok(
    problems.some((p) => p.includes('log.eval') && p.includes('self-check') && p.includes('agrees')),
    problems.join('\n'),
  );

  // The rollout browser shows sample 1's Inspect tool error (a timeout) at its first error.
  await page.getByTestId('tab-rollouts').click();
  await pick(page, 'rollout-condition', `${DATASET}\u001fopenai/m1\u001fbasic_agent_loop`);
  const rows = page.getByTestId('rollout-row');
  await rows.first().waitFor();
  const tasks = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector('td').textContent.trim()));
  const i = tasks.indexOf('1');
  assert.ok(i >= 0, `task 1 is listed: ${tasks}`);
  await rows.nth(i).click();
  const detail = page.getByTestId('rollout-detail');
  await detail.waitFor();
  const steps = detail.getByTestId('step');
  await steps.first().waitFor();
  assert.ok((await steps.count()) >= 2, 'a sample with tool calls has steps');
  const first = detail.locator('[data-testid="step"][data-first-error="true"]');
  assert.match(await first.textContent(), /timeout: Command timed out before completing\./);

  // Compare the two models: one model name, each file's model as its method.
  const items = page.getByTestId('file-item');
  assert.equal(await items.count(), 2);
  for (const [n, method] of [
    [0, 'm1'],
    [1, 'm2'],
  ]) {
    const item = items.nth(n);
    await item.locator('details.file-options > summary').click();
    await item.getByTestId('file-model').fill('arith runs');
    await computeAfter(page, () => item.getByTestId('file-model').dispatchEvent('change'));
    await item.getByTestId('file-method').fill(method);
    await computeAfter(page, () => item.getByTestId('file-method').dispatchEvent('change'));
  }
  await page.getByTestId('tab-compare').click();
  await pick(page, 'compare-dataset', DATASET);
  await pick(page, 'compare-model', 'arith runs');
  await pick(page, 'compare-a', 'm1');
  await pick(page, 'compare-b', 'm2');
  const table = page.getByTestId('compare-table');
  await table.waitFor();
  const shown = await table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      name: tr.querySelector('th').textContent.trim(),
      delta: tr.querySelector('td').textContent.trim(),
      zero: tr.getAttribute('data-contains-zero'),
    })),
  );

  // The CLI on the same rollouts under the same names (converted one file at a time).
  const dir = await tempDir(t);
  const cli = ensureCli();
  for (const [file, method] of [
    [M1, 'm1'],
    [M2, 'm2'],
  ]) {
    execFileSync(cli, ['convert', file, '-o', path.join(dir, `${method}.jsonl`), '--model', 'arith runs', '--method', method, '--quiet']);
  }
  const named = JSON.parse(cliReportBytes(['m1.jsonl', 'm2.jsonl'], { cwd: dir, bootstrap: B, seed: 0 }).toString('utf8'));
  const pair = named.paired.find((p) => p.compare === 'methods' && p.model === 'arith runs');
  assert.ok(pair, 'the CLI report compares m1 and m2');
  const flip = pair.a === 'm2';
  const want = [pair.ter, pair.auc_pec, pair.mean_fed, pair.final_success, ...pair.pec].map((d) => ({
    delta: d.delta === null ? null : flip ? -d.delta : d.delta,
    ci: d.ci && (flip ? [-d.ci[1], -d.ci[0]] : d.ci),
  }));
  assert.equal(shown.length, want.length, 'TER, AUC-PEC, Mean FED, final success and PEC(1..K)');
  shown.forEach((row, k) => {
    const w = want[k];
    const zero = w.ci !== null && w.ci[0] <= 0 && w.ci[1] >= 0;
    assert.equal(row.zero, String(zero), `${row.name}: data-contains-zero (CLI ${JSON.stringify(w.ci)})`);
    if (w.delta !== null) {
      assert.ok(Math.abs(Number(row.delta) - w.delta) <= 0.005 + 1e-12, `${row.name}: shows ${row.delta}, CLI ${w.delta}`);
    }
  });
  await fs.rm(dir, { recursive: true, force: true });
  await assertHealthy();
});
