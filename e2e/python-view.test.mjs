// `prefix-exec view` of the Python wheel (scripts/python.sh installs it into target/python-venv):
// the page it serves preloads the given file and folder (a ToolSandbox run folder, whose files
// must keep their relative paths), reaches a ready report, and its table equals the wheel's
// `prefix-exec score` on the same paths. Skipped when the wheel is not installed.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { EXAMPLE, ROOT, compareTableToReport, launch, readMainTable, waitMounted, waitReady } from './lib.mjs';

const CLI = path.join(ROOT, 'target', 'python-venv', 'bin', 'prefix-exec');
const RUN = path.join(
  ROOT, 'tests', 'fixtures', 'import', 'toolsandbox', 'agent_acme', 'tiny-1_user_openai',
  'gpt-4o_01_02_2025_03_04_05',
);

/** Starts `prefix-exec view --no-browser PATHS`; resolves to { url, stop() } once it prints. */
function startView(paths) {
  const proc = spawn(CLI, ['view', '--no-browser', ...paths], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+\/\S*)/);
      if (m) resolve({ url: m[1], stop: () => proc.kill('SIGTERM') });
    });
    proc.on('exit', (code) => reject(new Error(`view exited with ${code}: ${stderr}`)));
  });
}

test('prefix-exec view: the page preloads the given files and its table = the wheel\'s score', {
  timeout: 240_000,
  skip: fs.existsSync(CLI) ? false : `${CLI} is not installed (scripts/python.sh)`,
}, async (t) => {
  const view = await startView([EXAMPLE, RUN]);
  t.after(() => view.stop());
  const browser = await launch();
  t.after(() => browser.close());
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(view.url);
  await waitMounted(page);
  await waitReady(page, 180_000);
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  // The example is listed as a file, the ToolSandbox run folder as one run of its files.
  const names = await page.getByTestId('file-item').allInnerTexts();
  assert.ok(names.some((n) => n.includes('synthetic-grid.jsonl')), `the files are listed: ${names}`);
  const run = page.getByTestId('file-group');
  assert.equal(await run.count(), 1, 'the run folder is one entry');
  assert.ok(Number(await run.getAttribute('data-files')) >= 2, 'with its files');

  // The app's default settings (10,000 resamples, seed 0) are the CLI's defaults.
  const report = JSON.parse(
    execFileSync(CLI, ['score', EXAMPLE, RUN, '--json', '-', '--quiet'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8'),
  );
  assert.ok(report.conditions.some((c) => c.model === 'acme/tiny-1'), 'the ToolSandbox run was read');
  compareTableToReport(await readMainTable(page), report);
  assert.deepEqual(errors, []);
});

// A released ToolSandbox run folder of ../shared (2,065 files, 54 MB): every file is fetched
// through the viewer's list and the table still equals the CLI's. Skipped without ../shared.
const RELEASED = path.join(ROOT, '..', 'shared', 'data', 'released-runs', 'toolsandbox', 'agent_openai');

test('prefix-exec view of a released run folder of 2,065 files: table = the wheel\'s score', {
  timeout: 300_000,
  skip: !fs.existsSync(CLI)
    ? `${CLI} is not installed (scripts/python.sh)`
    : !fs.existsSync(RELEASED) && `shared data not found at ${RELEASED}`,
}, async (t) => {
  const view = await startView([RELEASED]);
  t.after(() => view.stop());
  const browser = await launch();
  t.after(() => browser.close());
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const start = Date.now();
  await page.goto(view.url);
  await waitMounted(page);
  const text = await waitReady(page, 240_000);
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  t.diagnostic(`ready after ${Date.now() - start} ms (${text})`);
  const report = JSON.parse(
    execFileSync(CLI, ['score', RELEASED, '--json', '-', '--quiet'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] })
      .toString('utf8'),
  );
  compareTableToReport(await readMainTable(page), report);
});
