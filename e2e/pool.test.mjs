// The bootstrap on a pool of Web Workers: the exported report is the same bytes with one worker
// and with several, and equal to the CLI's; Cancel during a multi-worker run stops the
// computation (the coordinating worker and, with it, the pool it started) and a new run works.

import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';

import {
  EXAMPLE,
  EXAMPLE_NAME,
  cliReportBytes,
  computeAfter,
  download,
  loadExample,
  openApp,
  progressState,
  progressText,
  setSetting,
} from './lib.mjs';

const BOOTSTRAP = 3000; // 12 chunks per dataset: every pool worker gets several

test('report export: 1 worker = 3 workers = CLI, byte for byte', { timeout: 300_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  const workers = page.getByTestId('settings-workers');
  const initial = Number(await workers.inputValue());
  t.diagnostic(`default pool size ${initial} (navigator.hardwareConcurrency, at most 8)`);
  assert.ok(initial >= 1 && initial <= 8, `default pool size ${initial}`);
  await setSetting(page, 'settings-bootstrap', BOOTSTRAP);
  await setSetting(page, 'settings-workers', 1);
  const text1 = await loadExample(page);
  assert.match(text1, /^Done in \d+ ms$/, 'one worker: no pool');
  const one = (await download(page, 'export-report-json')).bytes;

  const text3 = await computeAfter(page, () => setSetting(page, 'settings-workers', 3));
  assert.match(text3, /^Done in \d+ ms on 3 workers$/, `three workers ran: ${text3}`);
  const three = (await download(page, 'export-report-json')).bytes;
  t.diagnostic(`${text1} | ${text3}`);

  const native = cliReportBytes([EXAMPLE_NAME], { cwd: path.dirname(EXAMPLE), bootstrap: BOOTSTRAP, seed: 0 });
  assert.ok(one.equals(native), `1 worker (${one.length} bytes) differs from the CLI (${native.length} bytes)`);
  assert.ok(three.equals(native), `3 workers (${three.length} bytes) differ from the CLI (${native.length} bytes)`);
  const report = JSON.parse(three.toString('utf8'));
  assert.equal(report.settings.bootstrap, BOOTSTRAP);
  assert.ok(report.paired.length > 0 && report.conditions.every((c) => c.ter.ci !== null));
  await assertHealthy();
});

test('Cancel during a multi-worker bootstrap stops it; the next run completes', { timeout: 300_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-workers', 2);
  // Many resamples, so the pool is still busy when Cancel is clicked.
  await setSetting(page, 'settings-bootstrap', 400_000);
  await page.getByTestId('load-example').click();
  await page.waitForFunction(
    () => /Bootstrap: \d+ of \d+ resamples/.test(document.querySelector('[data-testid="progress"]')?.textContent ?? ''),
    null,
    { timeout: 120_000, polling: 20 },
  );
  const during = await progressText(page);
  t.diagnostic(`before cancel: ${during}; ${page.workers().length} workers listed`);
  await page.getByTestId('cancel').click();
  await page.locator('[data-testid="progress"][data-state="cancelled"]').waitFor({ timeout: 30_000 });
  // Nothing arrives from the stopped pool: the page stays cancelled.
  await page.waitForTimeout(1500);
  assert.equal(await progressState(page), 'cancelled', 'still cancelled');
  assert.equal(await page.getByTestId('export-report-json').isDisabled(), true, 'no report to export');

  // A fresh run on a fresh pool completes.
  const text = await computeAfter(page, () => setSetting(page, 'settings-bootstrap', 1000));
  assert.match(text, /on 2 workers$/, `the next run used the pool: ${text}`);
  const bytes = (await download(page, 'export-report-json')).bytes;
  const native = cliReportBytes([EXAMPLE_NAME], { cwd: path.dirname(EXAMPLE), bootstrap: 1000, seed: 0 });
  assert.ok(bytes.equals(native), 'the report after a cancelled run equals the CLI');
  await assertHealthy();
});
