// The main table against the native CLI, and the WASM report against the native report byte for
// byte.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  EXAMPLE,
  EXAMPLE_NAME,
  SCORE_COLUMNS,
  cliReport,
  cliReportBytes,
  compareTableToReport,
  correctRoundings,
  distIsStale,
  download,
  loadExample,
  openApp,
  readMainTable,
  setSetting,
} from './lib.mjs';

test('main table = CLI report; bold cells are exactly the block maxima at 2 decimals', { timeout: 180_000 }, async (t) => {
  const B = 2000;
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await setSetting(page, 'settings-seed', 0);
  assert.equal(await page.getByTestId('settings-decimals').inputValue(), '2');
  await loadExample(page);
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();

  const report = cliReport(EXAMPLE, { bootstrap: B, seed: 0 });
  assert.equal(report.settings.bootstrap, B);
  const rows = await readMainTable(page);
  assert.equal(rows.length, report.conditions.length, 'one row per condition');
  const cells = compareTableToReport(rows, report);
  t.diagnostic(`${rows.length} rows, ${cells} cells equal to the CLI's values`);

  // Displayed values: each is a correct rounding of the CLI value at 2 decimals.
  const byKey = new Map(report.conditions.map((c) => [`${c.dataset}/${c.model}/${c.method}`, c]));
  const shown = (row, col) => {
    const first = row.cells[col].text.split(' ')[0];
    const c = byKey.get(`${row.dataset}/${row.model}/${row.method}`);
    const v = c[col].value;
    if (v === null) {
      assert.equal(first, '–', `${row.method} ${col}: undefined value shown as –`);
      return null;
    }
    assert.ok(
      correctRoundings(v, 2).includes(first),
      `${row.dataset} / ${row.model} / ${row.method} ${col}: shows ${first}, value ${v}`,
    );
    return Number(first);
  };

  // Bold = block maximum of the displayed values (ties included), nothing else.
  const blocks = new Map();
  for (const row of rows) {
    const key = `${row.dataset} / ${row.model}`;
    if (!blocks.has(key)) blocks.set(key, []);
    blocks.get(key).push(row);
  }
  assert.equal(blocks.size, 9, '3 datasets × 3 models');
  let bold = 0;
  for (const [key, block] of blocks) {
    for (const col of SCORE_COLUMNS) {
      const values = block.map((r) => shown(r, col));
      const defined = values.filter((v) => v !== null);
      const max = defined.length ? Math.max(...defined) : null;
      block.forEach((row, i) => {
        const want = values[i] !== null && values[i] === max;
        const cell = row.cells[col];
        assert.equal(cell.max, want, `${key} / ${row.method} ${col} (${cell.text}): class max should be ${want}`);
        assert.equal(cell.strong, want, `${key} / ${row.method} ${col} (${cell.text}): <strong> should be ${want}`);
        if (want) bold++;
      });
    }
    for (const row of block) {
      assert.equal(row.cells.rr_eligible.max, false, 'RR-Eligible is a count and is never marked');
    }
  }
  t.diagnostic(`${bold} bold cells`);
  await assertHealthy();
});

test('WASM report = native report, byte for byte (default settings)', { timeout: 180_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  // The defaults: 10,000 resamples, seed 0, level 0.95, max depth 10.
  assert.equal(await page.getByTestId('settings-bootstrap').inputValue(), '10000');
  assert.equal(await page.getByTestId('settings-seed').inputValue(), '0');
  assert.equal(await page.getByTestId('settings-level').inputValue(), '0.95');
  assert.equal(await page.getByTestId('settings-max-depth').inputValue(), '10');
  await loadExample(page);
  const { name, bytes } = await download(page, 'export-report-json');
  assert.match(name, /\.json$/);

  // Called from inside static/examples with the bare name, as the page names the file.
  const native = cliReportBytes([EXAMPLE_NAME], { cwd: path.dirname(EXAMPLE), bootstrap: 10_000, seed: 0 });
  if (!bytes.equals(native)) {
    const a = bytes.toString('utf8').split('\n');
    const b = native.toString('utf8').split('\n');
    const i = a.findIndex((line, j) => line !== b[j]);
    assert.fail(
      `the browser's report (${bytes.length} bytes) differs from the CLI's (${native.length} bytes); ` +
        `first difference at line ${i + 1}:\n  browser: ${a[i]}\n  cli:     ${b[i]}` +
        (distIsStale() ? '\n(note: dist/ is older than src/: rebuild it with trunk build --release)' : ''),
    );
  }
  const report = JSON.parse(bytes.toString('utf8'));
  assert.equal(report.settings.bootstrap, 10_000);
  assert.equal(report.inputs[0].file, EXAMPLE_NAME);
  t.diagnostic(`${bytes.length} bytes identical`);
  await assertHealthy();
});
