// The second bundled example: real released tau-bench / tau2-bench runs, converted.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT, cliReport, compareTableToReport, openApp, readMainTable, setSetting, waitReady } from './lib.mjs';

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
