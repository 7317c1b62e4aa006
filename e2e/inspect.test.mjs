// Inspect AI logs in the browser: two .eval archives of different models dropped at once (read
// by random access from the File in the worker), the main table equal to the CLI's report, the
// rollout browser showing an Inspect tool error, and the two models' logs compared directly as
// two conditions in the Paired comparison tab (A = openai/m1, B = openai/m2), checked against
// the cross-condition pair of the CLI's report of the same two files.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  ROOT,
  cliReportBytes,
  compareTableToReport,
  openApp,
  readMainTable,
  setSetting,
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
  // The self-check of each log that agrees is listed apart, as the report's checks: not an
  // input problem.
  const problems = await page.getByTestId('error-item').allTextContents();
  assert.ok(!problems.some((p) => p.includes('self-check')), problems.join('\n'));
  const checks = await page.getByTestId('check-item').allTextContents();
  assert.equal(checks.length, report.checks.length, checks.join('\n'));
  report.checks.forEach((c, i) => assert.ok(checks[i].endsWith(c.message), checks[i]));
  assert.ok(
    checks.some((p) => p.includes('log.eval') && p.includes('self-check') && p.includes('agrees')),
    checks.join('\n'),
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

  // Compare the two logs as they are: condition A = openai/m1, condition B = openai/m2.
  assert.equal(await page.getByTestId('file-item').count(), 2);
  await page.getByTestId('tab-compare').click();
  await pick(page, 'compare-dataset', DATASET);
  await pick(page, 'compare-model', 'openai/m1');
  await pick(page, 'compare-a', 'basic_agent_loop');
  await pick(page, 'compare-b-model', 'openai/m2');
  await pick(page, 'compare-b', 'basic_agent_loop');
  const table = page.getByTestId('compare-table');
  await table.waitFor();
  assert.equal(await table.getAttribute('data-kind'), 'conditions', 'a cross-condition pair');
  const shown = await table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      name: tr.querySelector('th').textContent.trim(),
      delta: tr.querySelector('td').textContent.trim(),
      zero: tr.getAttribute('data-contains-zero'),
    })),
  );

  // The CLI's report of the same two files holds the pair (automatic: each model has one
  // method), once, as a cross-condition pair.
  const same = report.paired.filter((p) => p.dataset === DATASET);
  assert.equal(same.length, 1, `one entry for the two conditions: ${JSON.stringify(same.map((p) => p.compare))}`);
  const pair = same[0];
  assert.equal(pair.compare, 'conditions');
  const flip = pair.a.model === 'openai/m2';
  assert.equal([pair.a.model, pair.b.model].sort().join(' '), 'openai/m1 openai/m2');
  const [onlyA, onlyB] = flip ? [pair.only_b, pair.only_a] : [pair.only_a, pair.only_b];
  assert.equal(
    await page.getByTestId('pair-counts').innerText(),
    `${pair.n_shared} shared tasks; ${onlyA} only in A; ${onlyB} only in B.`,
  );
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
  t.diagnostic(`pair: ${pair.n_shared} shared tasks, Δ final success ${pair.final_success.delta}`);
  await assertHealthy();
});
