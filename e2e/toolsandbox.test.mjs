// A ToolSandbox run folder dropped on the page: its files keep their relative paths as names
// (as a dropped or picked folder gives them), the run is recognised by content and joined
// across files, the table equals the CLI's on the same folder, the similarity threshold is
// stated under the table, and the rollout viewer shows the calls with their exception text.

import assert from 'node:assert/strict';
import fs from 'node:fs';
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

const B = 500;
const BASE = path.join(ROOT, 'tests', 'fixtures', 'import', 'toolsandbox');
const RUN = 'agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05';

/** Every file of the run folder: [relative name, text]. */
function runFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push([path.relative(BASE, p).split(path.sep).join('/'), fs.readFileSync(p, 'utf8')]);
    }
  };
  walk(path.join(BASE, RUN));
  return out.sort(([a], [b]) => (a < b ? -1 : 1));
}

test('a dropped ToolSandbox run folder: table = CLI, τ stated, calls with their exceptions', { timeout: 180_000 }, async (t) => {
  const files = runFiles();
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  const accepted = await page.evaluate((files) => {
    const dataTransfer = new DataTransfer();
    for (const [name, text] of files) dataTransfer.items.add(new File([text], name, { type: 'application/json' }));
    const over = new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer });
    document.dispatchEvent(over);
    const drop = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer });
    document.dispatchEvent(drop);
    return over.defaultPrevented && drop.defaultPrevented;
  }, files);
  assert.ok(accepted, 'the page accepts the drop');
  await waitReady(page);
  // The run folder is one entry of the file list, with every file of the folder in it.
  const group = page.getByTestId('file-group');
  assert.equal(await group.count(), 1, 'one run');
  assert.equal(await group.getAttribute('data-files'), String(files.length));
  assert.match(await group.innerText(), /ToolSandbox run · acme\/tiny-1/);
  await group.getByTestId('file-group-toggle').click();
  assert.equal(await group.getByTestId('file-item').count(), files.length, 'every file of the folder is listed');

  // The same folder through the CLI (the folder as the path): same table.
  const report = JSON.parse(cliReportBytes([RUN], { cwd: BASE, bootstrap: B, seed: 0 }).toString('utf8'));
  assert.equal(report.conditions.length, 1);
  assert.equal(report.conditions[0].model, 'acme/tiny-1');
  assert.equal(report.conditions[0].n, 7);
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  const rows = await readMainTable(page);
  assert.equal(rows.length, 1);
  compareTableToReport(rows, report);
  const footnote = await page.locator('.footnote').first().innerText();
  assert.match(footnote, /Success on toolsandbox: no traceback and similarity ≥ 1/);

  // The run's messages: the excluded provider error, the scenario without trajectory; the
  // self-check, which passed, apart from them.
  const problems = await page.getByTestId('error-item').allInnerTexts();
  for (const p of problems) t.diagnostic(p);
  assert.ok(problems.some((p) => /1 scenarios excluded.*APITimeoutError/.test(p)), 'provider error said');
  assert.ok(problems.some((p) => /have no trajectory files.*missing_one/.test(p)), 'missing trajectory said');
  assert.ok(!problems.some((p) => /self-check/.test(p)), 'a passed self-check is no problem');
  const checks = await page.getByTestId('check-item').allInnerTexts();
  assert.equal(checks.length, 1, checks.join('\n'));
  assert.match(checks[0], /self-check: .* matches/);
  assert.match(await page.getByTestId('check-list').innerText(), /Self-checks passed: 1/);

  // The rollout viewer: the permuted parallel batch and the scrambled name.
  await page.getByTestId('tab-rollouts').click();
  await page.getByTestId('rollout-search').fill('wifi_on_parallel');
  await page.getByTestId('rollout-row').first().click();
  const steps = page.getByTestId('rollout-detail').getByTestId('step');
  await steps.first().waitFor();
  assert.equal(await steps.count(), 4);
  assert.equal(await steps.first().getAttribute('data-first-error'), 'true');
  assert.match(await steps.first().innerText(), /set_wifi_status[\s\S]*PermissionError: Wifi cannot be turned on in low battery mode/);
  await page.getByTestId('rollout-search').fill('timestamp_scrambled');
  await page.getByTestId('rollout-row').first().click();
  await page.getByTestId('step-agent-tool').waitFor();
  assert.match(await page.getByTestId('step').first().innerText(), /get_current_timestamp[\s\S]*called as utilities_2/);
  await assertHealthy();
});

test('the similarity threshold set on result_summary.json changes success, as the CLI flag does', { timeout: 180_000 }, async (t) => {
  const files = runFiles();
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await page.evaluate((files) => {
    const dataTransfer = new DataTransfer();
    for (const [name, text] of files) dataTransfer.items.add(new File([text], name, { type: 'application/json' }));
    document.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer }));
  }, files);
  await waitReady(page);
  // The run's options (set on every file of the run, its result_summary.json included).
  const run = page.getByTestId('file-group');
  await run.locator('summary').first().click();
  const tau = run.getByTestId('file-ts-threshold');
  await tau.fill('0.9');
  await tau.dispatchEvent('change');
  await waitReady(page);
  const report = JSON.parse(
    cliReportBytes([RUN], { cwd: BASE, bootstrap: B, seed: 0, extra: ['--similarity-threshold', '0.9'] }).toString('utf8'),
  );
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  const rows = await readMainTable(page);
  compareTableToReport(rows, report);
  assert.match(await page.locator('.footnote').first().innerText(), /similarity ≥ 0\.9/);
  await assertHealthy();
});
