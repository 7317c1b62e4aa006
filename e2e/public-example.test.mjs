// The second bundled example: real released tau-bench / tau2-bench runs, converted.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT, cliReport, compareTableToReport, openApp, readMainTable, setSetting, waitReady } from './lib.mjs';

const selectTab = (page, name) => page.getByTestId(`tab-${name}`).click();

test('"Load public runs" scores the released tau-bench and tau2 runs like the CLI, with pass^k', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 1000);
  await page.getByTestId('load-example-public').click();
  await waitReady(page);
  const rows = await readMainTable(page);
  assert.equal(rows.length, 4);
  const file = path.join(ROOT, 'static', 'examples', 'public-leaderboard-runs.jsonl');
  compareTableToReport(rows, cliReport(file, { bootstrap: 1000 }));
  const pass = await page.locator('tr[data-dataset="tau-bench/airline"] td[data-col=pass_hat]').innerText();
  assert.equal(pass, '0.42/0.27/0.22/0.20', 'tau-bench README: pass^1..4 = .420 .273 .220 .200');
  await assertHealthy();
});

test('per-file options: a model override renames every condition; excluded rollouts are counted, not silent', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await page.getByTestId('load-example-public').click();
  await waitReady(page);
  const item = page.getByTestId('file-item').first();
  await item.locator('summary').click();
  await item.getByTestId('file-model').fill('renamed-model');
  await item.getByTestId('file-model').dispatchEvent('change');
  await waitReady(page);
  let rows = await readMainTable(page);
  assert.equal(rows.length, 4);
  assert.ok(rows.every((r) => r.model === 'renamed-model'), JSON.stringify(rows.map((r) => r.model)));
  await item.getByTestId('file-exclude').fill('user_stop');
  await item.getByTestId('file-exclude').dispatchEvent('change');
  await waitReady(page);
  rows = await readMainTable(page);
  assert.equal(rows.length, 1, 'only tau-bench rollouts (no termination reason) remain');
  const errors = await page.getByTestId('error-list').innerText();
  assert.match(errors, /184/, errors);
  assert.match(errors, /user_stop/, errors);
  await assertHealthy();
});

test('First failures on "Load public runs": a real label breakdown from the built-in rules, environment apart, as the CLI reports', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await page.getByTestId('load-example-public').click();
  await waitReady(page);
  await selectTab(page, 'labels');
  const table = page.getByTestId('label-table');
  await table.waitFor();
  const readRows = () =>
    table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        name: tr.querySelector('th').textContent.trim(),
        environment: Number(tr.querySelector('[data-testid=label-environment]').textContent.trim()),
        counts: tr.querySelector('[data-testid=label-counts]').textContent.trim(),
      })),
    );
  const rows = await readRows();
  const file = path.join(ROOT, 'static', 'examples', 'public-leaderboard-runs.jsonl');
  const report = cliReport(file, { bootstrap: 200 });
  assert.equal(rows.length, report.conditions.length);
  let agent = 0;
  let labelled = 0;
  for (const c of report.conditions) {
    const row = rows.find((r) => r.name === `${c.dataset} / ${c.model} / ${c.method}`);
    assert.ok(row, `no row for ${c.dataset}/${c.model}/${c.method}: ${JSON.stringify(rows)}`);
    const labels = c.first_failure_labels;
    assert.equal(row.environment, labels.environment ?? 0);
    for (const [name, n] of Object.entries(labels)) {
      if (name === 'environment') continue;
      assert.ok(row.counts.includes(`${name} ${n} (`), `${row.name}: ${row.counts} lacks ${name} ${n}`);
      agent += n;
      if (name !== 'unlabeled') labelled += n;
    }
    assert.ok(c.first_failure_label_sources, 'the report says where the labels came from');
  }
  assert.ok(agent > 0 && labelled >= 0.9 * agent, `${labelled} of ${agent} of the agent's first failures labelled`);
  // The rollout browser says where a label came from and why.
  await selectTab(page, 'rollouts');
  const cell = page.getByTestId('rollout-label').filter({ hasText: /state|dependency|precondition|information|schema/ }).first();
  await cell.waitFor();
  assert.match(await cell.getAttribute('title'), /^rule:[\w.]+: \S/);
  // Built-in rules off: the logs give no labels, so every first failure is unlabeled again.
  await page.getByTestId('settings-builtin-labels').uncheck();
  await waitReady(page);
  await selectTab(page, 'labels');
  await table.waitFor();
  for (const r of await readRows()) {
    assert.match(r.counts, /^(unlabeled \d+ \(100%\)|no failed prefix of the agent's)$/, `${r.name}: ${r.counts}`);
  }
  await assertHealthy();
});
