// Your own agent logs (#22): the shared message transcripts (Toolathlon trajectories, AgentDojo-
// style runs, an SGLang export of a tau2 run; never committed here) picked as one folder. The
// app shows the field mapping each file was read with; changing the success field — for one
// file in its options, then for every file in the settings — recomputes, and the report equals
// the CLI's with the same --field flag. The rollout browser says which rule rejected a call.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import fs from 'node:fs';
import path from 'node:path';

import { ROOT, cliReportBytes, computeAfter, download, openApp, setSetting } from './lib.mjs';

const RUNS = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');
const FOLDER = 'generic';
const SGLANG = 'generic/jibf+agent_hard_benchmark/tau2-bench/data/simulations/output-rs0.jsonl';

async function pick(page, testid, value) {
  const select = page.getByTestId(testid);
  await select.locator(`option[value="${value}"]`).waitFor({ state: 'attached' });
  await select.selectOption(value);
  assert.equal(await select.inputValue(), value);
}

const appReport = async (page) => JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));
const cli = (files, extra = []) =>
  JSON.parse(cliReportBytes(files, { cwd: RUNS, bootstrap: 0, seed: 0, extra }).toString('utf8'));

test('transcripts picked as a folder: mappings shown, a changed success field = the CLI with --field', { timeout: 300_000 }, async (t) => {
  if (!fs.existsSync(path.join(RUNS, FOLDER))) return t.skip(`shared data not found at ${RUNS}`);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 0);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(path.join(RUNS, FOLDER)), 240_000);

  // The mappings the files were read with, per kind of file.
  const detected = await page.getByTestId('detected-mapping').innerText();
  t.diagnostic(detected);
  assert.match(detected, /20 files:\s*success ← pass\s*task ← file name \(<model>_<task>\)\s*model ← file name \(<model>_<task>\)\s*method ← default\s*dataset ← default/);
  assert.match(detected, /15 files:\s*success ← evaluation\.utility\s*task ← task_id\s*model ← pipeline_name/);
  assert.match(detected, /1 file:\s*success ← eval_result\.overall_reward ≥ 1\s*task ← meta\.id\s*model ← model_path/);
  const sglangItem = page.getByTestId('file-item').filter({ hasText: 'output-rs0.jsonl' });
  assert.match(await sglangItem.getByTestId('file-mapping').innerText(), /success ← eval_result\.overall_reward ≥ 1/);

  // As read: the CLI's report; Toolathlon's two models paired on their 10 shared tasks.
  let report = await appReport(page);
  assert.deepEqual(report.conditions, cli([FOLDER]).conditions);
  const models = report.conditions.filter((c) => c.dataset === 'transcripts').map((c) => [c.model, c.n]);
  assert.deepEqual(models, [['claude-4.5-sonnet', 10], ['deepseek-v3.2-exp', 10]]);
  assert.ok(report.paired.some((p) => p.n_shared === 10), 'Toolathlon models paired on their shared tasks');
  const sglang = () => report.conditions.find((c) => c.model === 'openai/gpt-4o-20240806');
  assert.equal(sglang().final_success.value, 16 / 50);

  // One file's success field: the SGLang export scored by meta.is_correct, as the CLI with the flag.
  await sglangItem.locator('details.file-options > summary').click();
  // (setSetting takes any locator: the field of this file's own options panel.)
  await computeAfter(page, () => setSetting(sglangItem, 'file-field-success', 'meta.is_correct'), 120_000);
  report = await appReport(page);
  const alone = cli([SGLANG], ['--field', 'success=meta.is_correct']).conditions[0];
  assert.deepEqual(sglang(), alone);
  assert.equal(sglang().final_success.value, 18 / 50);

  // Every file's success field (the settings): the whole folder as `--field success=pass`.
  await computeAfter(page, () => setSetting(page, 'transcript-field-success', 'pass'), 120_000);
  report = await appReport(page);
  const flagged = cli([FOLDER], ['--field', 'success=pass']);
  assert.deepEqual(report.conditions, flagged.conditions);
  assert.equal(report.diagnostics_total, flagged.diagnostics_total);
  assert.ok(!report.conditions.some((c) => c.model === 'openai/gpt-4o-20240806'), 'no record of the export has `pass`');

  // The rollout browser says which rule rejected a call.
  await page.getByTestId('tab-rollouts').click();
  await pick(page, 'rollout-condition', 'transcripts\u001fclaude-4.5-sonnet\u001fdefault');
  await page.getByTestId('rollout-search').fill('canvas-do-quiz');
  await page.getByTestId('rollout-row').first().click();
  const first = page.getByTestId('rollout-detail').locator('[data-testid="step"][data-first-error="true"]');
  await first.waitFor();
  assert.match(await first.getByTestId('step-reject-source').innerText(), /rejected by (text|flag):/);
  await assertHealthy();
});
