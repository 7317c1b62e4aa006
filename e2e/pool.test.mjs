// The bootstrap on a pool of Web Workers: the exported report is the same bytes with one worker
// and with several, and equal to the CLI's; Cancel during a multi-worker run stops the
// computation (the coordinating worker and, with it, the pool it started) and a new run works.
// A file of many MB is read ahead by the pool (its lines parsed in slices on the pool workers):
// the report, diagnostics included, is the same bytes as with one worker and as the CLI's.

import assert from 'node:assert/strict';
import fs from 'node:fs';
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
  tempDir,
} from './lib.mjs';

// Enough work for the pool to run the bootstrap (it does from 300 M cells: the example at
// 10,000 resamples is 84.6 M), and 160 chunks per dataset: every pool worker gets several.
const BOOTSTRAP = 40_000;

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
  const text = await computeAfter(page, () => setSetting(page, 'settings-bootstrap', BOOTSTRAP));
  assert.match(text, /on 2 workers$/, `the next run used the pool: ${text}`);
  const bytes = (await download(page, 'export-report-json')).bytes;
  const native = cliReportBytes([EXAMPLE_NAME], { cwd: path.dirname(EXAMPLE), bootstrap: BOOTSTRAP, seed: 0 });
  assert.ok(bytes.equals(native), 'the report after a cancelled run equals the CLI');
  await assertHealthy();
});

/**
 * About 11 MB of canonical JSONL with everything whose handling depends on line order: tools
 * lines (set, cleared, set again) and rollouts with their own tools, over 1,000 malformed lines
 * spread through the file (the report keeps the first 1,000 diagnostics), blank lines, CRLF,
 * a 300 KB line across slice boundaries, "tools" inside a text, no final line break.
 */
function manyMegabytes() {
  const tools = '[{"type":"function","function":{"name":"cd","parameters":{"type":"object","properties":{"folder":{"type":"string"}},"required":["folder"]}}}]';
  const steps = [
    '{"tool":"cd","args":{"folder":"a"},"ok":true}',
    '{"tool":"cd","args":{"folder":"b/c"},"ok":true,"observation":"moved to b/c"}',
    '{"tool":"mv","args":{"to":"b"},"ok":false,"error":"No such file"}',
    '{"tool":"cd","args":{"folder":1}}',
    '{"tool":"ls","error":"permission denied","label":"precondition"}',
  ];
  const lines = [`{"tools":${tools}}`];
  for (let i = 1; lines.length < 52_000; i++) {
    const names = `"dataset":"ds${i % 3}","task_id":"t${(i * 7) % 911}","model":"m${i % 2}","method":"x${(i >> 1) % 3}"`;
    const n = i % 5;
    const s = Array.from({ length: n }, (_, k) => steps[(i + k * 3) % steps.length]).join(',');
    const cost = i % 4 === 0 ? `,"cost":{"tokens":${(i % 1000) + 0.5},"usd":${(i % 97) / 1000}}` : '';
    let line = `{${names},"success":${i % 3 === 0},"steps":[${s}]${cost}}`;
    if (i % 23 === 0) line = `not json ${i}`;
    else if (i % 37 === 0) line = `{${names},"success":"yes","steps":[]}`;
    else if (i % 401 === 0) line = i % 2 ? '' : '   ';
    else if (i % 5003 === 0) line = '{"tools":null}';
    else if (i % 7001 === 0) line = `{"tools":${tools}}`;
    else if (i % 1009 === 0) line = `{${names},"success":true,"steps":[${s}],"tools":${tools}}`;
    else if (i % 997 === 0) line = `{${names},"success":false,"steps":[{"tool":"x","ok":false,"error":"\\"tools\\" missing"}]}`;
    else if (i === 17_000) line = `{${names},"success":false,"steps":[{"tool":"cd","ok":false,"error":"${'x'.repeat(300_000)}"}]}`;
    lines.push(line + (i % 7 === 0 ? '\r' : ''));
  }
  return lines.join('\n');
}

test('a file of many MB read ahead by the pool: 1 worker = 2 workers = CLI, diagnostics included', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'many-mb.jsonl');
  fs.writeFileSync(file, manyMegabytes());
  const size = fs.statSync(file).size;
  assert.ok(size > 10 * 2 ** 20, `${size} bytes: several slices for the pool`);
  const bootstrap = 200;
  const native = cliReportBytes(['many-mb.jsonl'], { cwd: dir, bootstrap, seed: 0 });
  const report = JSON.parse(native.toString('utf8'));
  assert.equal(report.diagnostics.length, 1000, 'the first 1,000 diagnostics are kept');
  assert.ok(report.diagnostics_total > 1500, `${report.diagnostics_total} diagnostics in all`);

  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', bootstrap);
  const exports = {};
  await setSetting(page, 'settings-workers', 2);
  for (const workers of [2, 1]) {
    // The file is picked once; changing the pool size computes again.
    const action = workers === 2
      ? () => page.getByTestId('file-input').setInputFiles(file)
      : () => setSetting(page, 'settings-workers', workers);
    const text = await computeAfter(page, action, 240_000);
    const readAhead = Number(await page.getByTestId('progress').getAttribute('data-read-ahead'));
    t.diagnostic(`${workers} worker(s): ${text}; ${readAhead} lines read ahead by the pool`);
    if (workers > 1) {
      assert.match(text, /on 2 workers$/, text);
      assert.ok(readAhead > 40_000, `${readAhead} lines read ahead`);
    } else {
      assert.match(text, /^Done in \d+ ms$/, text);
      assert.equal(readAhead, 0, 'one worker reads every line itself');
    }
    exports[workers] = (await download(page, 'export-report-json')).bytes;
  }
  assert.ok(exports[2].equals(native), `2 workers (${exports[2].length} bytes) differ from the CLI (${native.length} bytes)`);
  assert.ok(exports[1].equals(native), `1 worker (${exports[1].length} bytes) differs from the CLI (${native.length} bytes)`);
  await assertHealthy();
});
