// Scale: a report with 20,000 conditions is shown a page at a time (the main table by rows: the
// leaderboard's one 20,000-row block cut into pages, the paper's layout by whole blocks; the
// other tables by rows, the survival curves a few plots at a time) and says what it left
// out (automatic paired comparisons; with 10,000 resamples, the bootstrap over its memory
// limit); a big file streams in with moving progress and can be cancelled and computed again.
//
// Nothing here is timed: the performance of big inputs is measured by bench/browser-big.sh.
//
// Environment: E2E_BIG_COPIES (copies of the synthetic grid in the big file, ≈ 3.4 MB each;
// default 76, ≈ 257 MB; cached in e2e/.cache/), E2E_SCALE_TASKS (rollouts per model in the
// 20,000-model file, on task ids drawn from 50 shared ones; default 50, i.e. every model runs
// every task: 1,000,000 rollouts, ≈ 146 MB, written to a temporary directory).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { computeAfter, ensureGrid, openApp, progressState, setSetting, tempDir, waitReady } from './lib.mjs';

const MODELS = 20_000;
const SHARED_TASKS = 50;
const TASKS_PER_MODEL = Number(process.env.E2E_SCALE_TASKS ?? SHARED_TASKS);
const RESAMPLES = 200;
const PAGE_ROWS = 100;
const PAGE_PLOTS = 12;
const BIG_COPIES = Number(process.env.E2E_BIG_COPIES ?? 76);

/**
 * Writes a JSONL of MODELS distinct models (dataset "d", method "a"), each with
 * TASKS_PER_MODEL rollouts on task ids drawn from SHARED_TASKS shared ones, two steps each,
 * with varied step outcomes and success.
 */
function writeManyModels(file) {
  const out = fs.openSync(file, 'w');
  try {
    let buf = [];
    for (let m = 0; m < MODELS; m++) {
      const model = `m${String(m).padStart(5, '0')}`;
      for (let j = 0; j < TASKS_PER_MODEL; j++) {
        const task = (m + j * 17) % SHARED_TASKS;
        const h = (m * 31 + task * 7 + j) % 7;
        const steps = [
          h === 0 ? { tool: 'ls', ok: false, error: 'denied', label: 'state' } : { tool: 'ls', ok: true },
          h === 1 ? { tool: 'cat', ok: false, error: 'missing', label: 'schema' } : { tool: 'cat', ok: true },
        ];
        buf.push(JSON.stringify({ dataset: 'd', task_id: `t${task}`, model, method: 'a', success: h > 2, steps }));
      }
      if (buf.length >= 10_000) {
        fs.writeSync(out, buf.join('\n') + '\n');
        buf = [];
      }
    }
    if (buf.length) fs.writeSync(out, buf.join('\n') + '\n');
  } finally {
    fs.closeSync(out);
  }
}

/**
 * The dataset's maximum final success (at the table's 2 decimals: k/50 is exact) and the models
 * reaching it, from the same formula as writeManyModels (every model runs every task once when
 * TASKS_PER_MODEL = SHARED_TASKS; otherwise its success rate over its rollouts).
 */
function expectedBestSuccess() {
  const rate = new Map();
  for (let m = 0; m < MODELS; m++) {
    let ok = 0;
    const tasks = new Map();
    for (let j = 0; j < TASKS_PER_MODEL; j++) {
      const task = (m + j * 17) % SHARED_TASKS;
      const h = (m * 31 + task * 7 + j) % 7;
      tasks.set(task, [...(tasks.get(task) ?? []), h > 2]);
    }
    for (const v of tasks.values()) ok += v.filter(Boolean).length;
    const n = [...tasks.values()].reduce((s, v) => s + v.length, 0);
    rate.set(`m${String(m).padStart(5, '0')}`, Number((ok / n).toFixed(2)));
  }
  const max = Math.max(...rate.values());
  return { max, models: new Set([...rate].filter(([, v]) => v === max).map(([m]) => m)) };
}

async function selectTab(page, name) {
  await page.getByTestId(`tab-${name}`).click();
  await page.locator(`[data-testid="tab-${name}"][aria-selected="true"]`).waitFor();
}

/** The first pager's label on the page (waits for it). */
async function pagerLabel(page) {
  const label = page.getByTestId('pager').first().getByTestId('page-label');
  await label.waitFor();
  return (await label.innerText()).trim();
}

/** The progress bar's own text (without the Cancel button's). */
const barText = async (page) => (await page.locator('[data-testid="progress"] .progress-text').innerText()).trim();

const mainRows = (page) => page.locator('table[data-testid="main-table"] tr[data-method]');

test('20,000 conditions: paged tables and plots, a note on skipped comparisons, a responsive page', { timeout: 900_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'many-models.jsonl');
  writeManyModels(file);
  t.diagnostic(`${MODELS} models × ${TASKS_PER_MODEL} rollouts, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB`);

  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', RESAMPLES);
  assert.equal(await page.getByTestId('settings-bootstrap').inputValue(), String(RESAMPLES));
  await page.getByTestId('file-input').setInputFiles(file);
  t.diagnostic(await waitReady(page, 800_000));

  // Main table, leaderboard layout (the default: 20,000 models of one method each): one block
  // of 20,000 rows, cut into pages of PAGE_ROWS rows; bold marks the maximum over the whole
  // dataset (ties included), and sorting orders the whole dataset before paging.
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor({ timeout: 120_000 });
  await page.locator('[data-testid="main-table"][data-layout="leaderboard"]').waitFor({ timeout: 120_000 });
  assert.equal(await mainRows(page).count(), PAGE_ROWS, `leaderboard page 1: ${PAGE_ROWS} rows`);
  assert.equal(await pagerLabel(page), `rows 1–${PAGE_ROWS} of ${MODELS} (page 1 of ${MODELS / PAGE_ROWS})`);
  assert.match(
    await page.locator('[data-testid="main-table"] tr.block-head').first().innerText(),
    new RegExp(`rows 1–${PAGE_ROWS} of ${MODELS}`),
    'the block head says which rows of the block the page shows',
  );
  const best = expectedBestSuccess();
  t.diagnostic(`final success: dataset maximum ${best.max}, reached by ${best.models.size} models`);
  const successCells = async () =>
    page.locator('[data-testid="main-table"] tr[data-method]').evaluateAll((rows) =>
      rows.map((r) => {
        const td = r.querySelector('td[data-col="final_success"]');
        return { model: r.getAttribute('data-model'), value: Number(td.getAttribute('data-value')), bold: td.classList.contains('max') };
      }),
    );
  const lb1 = await successCells();
  for (const c of lb1) {
    assert.equal(c.bold, best.models.has(c.model), `${c.model}: bold iff it reaches the dataset maximum ${best.max} (value ${c.value})`);
  }
  // Sorted by final success (descending): page 1 starts with the dataset maximum, every row of
  // page 1 is at least every row of page 2, and the marks stay the dataset's.
  await page.getByTestId('sort-final_success').click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="sort-final_success"]')?.textContent.includes('▼'),
    null,
    { timeout: 120_000 },
  );
  assert.equal(await pagerLabel(page), `rows 1–${PAGE_ROWS} of ${MODELS} (page 1 of ${MODELS / PAGE_ROWS})`, 'sorting starts at page 1');
  const sorted1 = await successCells();
  assert.equal(sorted1[0].value, best.max, 'sorted: the first row holds the dataset maximum');
  for (let i = 1; i < sorted1.length; i++) assert.ok(sorted1[i - 1].value >= sorted1[i].value, 'descending on page 1');
  const boldShown = sorted1.filter((c) => c.bold).length;
  assert.equal(boldShown, Math.min(best.models.size, PAGE_ROWS), 'every tied maximum is bold, first');
  await page.getByTestId('page-next').click();
  await page.waitForFunction(
    () => /page 2 of/.test(document.querySelector('[data-testid="page-label"]')?.textContent ?? ''),
    null,
    { timeout: 120_000 },
  );
  const sorted2 = await successCells();
  assert.equal(sorted2.length, PAGE_ROWS);
  assert.ok(sorted2[0].value <= sorted1[sorted1.length - 1].value, 'page 2 continues the order of the whole dataset');
  for (const c of sorted2) assert.equal(c.bold, best.models.has(c.model), `page 2, ${c.model}: bold iff at the maximum`);
  // Back to report order.
  await page.getByTestId('sort-final_success').click();
  await page.getByTestId('sort-final_success').click();

  // The paper's layout: a block per dataset × model (one row each here), pages of whole blocks.
  await page.getByTestId('table-layout').selectOption('paper');
  await page.locator('[data-testid="main-table"][data-layout="paper"]').waitFor({ timeout: 120_000 });
  const rows1 = await mainRows(page).count();
  assert.ok(rows1 > 0 && rows1 <= PAGE_ROWS, `main table: 1…${PAGE_ROWS} rows, got ${rows1}`);
  const label1 = await pagerLabel(page);
  t.diagnostic(`main table: ${rows1} rows; ${label1}`);
  const m1 = /^rows 1–(\d+) of (\d+) \(page 1 of (\d+)\)$/.exec(label1);
  assert.ok(m1, `main-table pager label: ${label1}`);
  assert.equal(Number(m1[2]), MODELS, 'the pager counts 20,000 blocks');
  assert.equal(Number(m1[1]), rows1, 'one row per block: the label ends where the rows do');
  assert.equal(Number(m1[3]), Math.ceil(MODELS / rows1));
  assert.equal(await page.getByTestId('page-prev').isDisabled(), true, 'no previous page on page 1');
  const first1 = await mainRows(page).first().getAttribute('data-model');

  // Next page: other blocks.
  await page.getByTestId('page-next').click();
  await page.waitForFunction(
    () => /page 2 of/.test(document.querySelector('[data-testid="page-label"]')?.textContent ?? ''),
    null,
    { timeout: 60_000 },
  );
  const label2 = await pagerLabel(page);
  t.diagnostic(`after next: ${label2}`);
  assert.match(label2, new RegExp(`^rows ${rows1 + 1}–\\d+ of ${MODELS} \\(page 2 of \\d+\\)$`));
  const rows2 = await mainRows(page).count();
  assert.ok(rows2 > 0 && rows2 <= PAGE_ROWS, `page 2: 1…${PAGE_ROWS} rows, got ${rows2}`);
  const first2 = await mainRows(page).first().getAttribute('data-model');
  assert.notEqual(first2, first1, 'page 2 starts with another model');
  assert.equal(await page.getByTestId('page-prev').isDisabled(), false, 'page 2 has a previous page');

  // Survival curves: a few plots at a time (the responsiveness check: the tab switch completes).
  await selectTab(page, 'curves');
  await page.getByTestId('pec-plot').first().waitFor({ timeout: 120_000 });
  const plots = await page.getByTestId('pec-plot').count();
  assert.ok(plots > 0 && plots <= PAGE_PLOTS, `curves: 1…${PAGE_PLOTS} canvases, got ${plots}`);
  const plotLabel = await pagerLabel(page);
  t.diagnostic(`curves: ${plots} canvases; ${plotLabel}`);
  assert.match(plotLabel, new RegExp(`^plots 1–${plots} of ${MODELS} \\(page 1 of ${Math.ceil(MODELS / PAGE_PLOTS)}\\)$`));

  // Checkpoints and outcomes: a page of rows each.
  for (const [tab, testid] of [
    ['checkpoints', 'checkpoint-table'],
    ['outcomes', 'outcome-table'],
  ]) {
    await selectTab(page, tab);
    await page.getByTestId(testid).waitFor({ timeout: 120_000 });
    const n = await page.getByTestId(testid).locator('tbody tr').count();
    const label = await pagerLabel(page);
    t.diagnostic(`${tab}: ${n} rows; ${label}`);
    assert.equal(n, PAGE_ROWS, `${tab}: ${PAGE_ROWS} rows`);
    assert.equal(label, `rows 1–${PAGE_ROWS} of ${MODELS} (page 1 of ${MODELS / PAGE_ROWS})`);
  }

  // Back to the main table: it renders again, a page at a time.
  await selectTab(page, 'table');
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor({ timeout: 120_000 });
  const rows3 = await mainRows(page).count();
  assert.ok(rows3 > 0 && rows3 <= PAGE_ROWS, `main table again: 1…${PAGE_ROWS} rows, got ${rows3}`);

  // The report says what it left out.
  const notes = await page.getByTestId('report-note').allInnerTexts();
  for (const n of notes) t.diagnostic(`note: ${n}`);
  assert.ok(
    notes.some((n) => /no automatic paired comparisons for groups over 32 members/.test(n) && /20000 models under method a \(d\)/.test(n)),
    `a note on the skipped paired comparisons, got ${JSON.stringify(notes)}`,
  );
  assert.ok(!notes.some((n) => /no bootstrap intervals/.test(n)), `${RESAMPLES} resamples fit in memory`);

  // The default 10,000 resamples of 20,000 conditions would exceed the bootstrap's memory
  // limit: the report has no intervals for the dataset and says why.
  t.diagnostic(await computeAfter(page, () => setSetting(page, 'settings-bootstrap', 10_000), 800_000));
  const notes2 = await page.getByTestId('report-note').allInnerTexts();
  for (const n of notes2) t.diagnostic(`note: ${n}`);
  assert.ok(
    notes2.some((n) => /^dataset d: no bootstrap intervals\b/.test(n) && /would need \d+ MiB \(the limit is 1024 MiB\)/.test(n)),
    `a note on the skipped bootstrap, got ${JSON.stringify(notes2)}`,
  );
  assert.ok(notes2.some((n) => /no automatic paired comparisons/.test(n)), 'the paired-comparison note stays');
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor({ timeout: 120_000 });
  const rows4 = await mainRows(page).count();
  assert.ok(rows4 > 0 && rows4 <= PAGE_ROWS, `main table without intervals: 1…${PAGE_ROWS} rows, got ${rows4}`);
  assert.match(await pagerLabel(page), new RegExp(`^rows 1–\\d+ of ${MODELS} \\(page 1 of \\d+\\)$`));
  await assertHealthy();
});

test('a big file streams with progress and can be cancelled, then computed again', { timeout: 900_000 }, async (t) => {
  const grid = ensureGrid(BIG_COPIES);
  const size = fs.statSync(grid).size;
  t.diagnostic(`${path.basename(grid)}: ${(size / 1e6).toFixed(0)} MB`);
  const { page, assertHealthy } = await openApp(t);
  const bar = page.locator('[data-testid="progress"] [role="progressbar"]');
  const valueNow = async () => Number(await bar.getAttribute('aria-valuenow'));

  await page.getByTestId('file-input').setInputFiles(grid);
  // Reading has started and some bytes are read.
  await page.waitForFunction(
    () => {
      const text = document.querySelector('[data-testid="progress"]')?.textContent ?? '';
      const m = /Reading files: ([\d.]+) of ([\d.]+) MB/.exec(text);
      return m !== null && Number(m[1]) > 0;
    },
    null,
    { timeout: 120_000, polling: 20 },
  );
  const text1 = await barText(page);
  t.diagnostic(`reading: ${text1}`);
  const m = /Reading files: ([\d.]+) of ([\d.]+) MB/.exec(text1);
  assert.ok(m, `progress text while reading: ${text1}`);
  assert.ok(Math.abs(Number(m[2]) - size / 1e6) < 0.1, `the total is the file's size: ${text1}`);

  // The bar moves.
  const v1 = await valueNow();
  await page.waitForFunction(
    (v) => {
      const el = document.querySelector('[data-testid="progress"]');
      const now = Number(el.querySelector('[role="progressbar"]').getAttribute('aria-valuenow'));
      return now > v || el.getAttribute('data-state') !== 'computing';
    },
    v1,
    { timeout: 120_000, polling: 20 },
  );
  const v2 = await valueNow();
  t.diagnostic(`aria-valuenow ${v1} → ${v2}`);
  assert.ok(v2 > v1, `progress moves: ${v1} → ${v2}`);
  assert.equal(await progressState(page), 'computing', 'still computing');

  // Cancel: the worker stops, the page says so and offers to compute again. With a pool of Web
  // Workers the page lists the scoring worker and the pool workers it started, in no promised
  // order; terminating the scoring worker closes its pool with it, so every listed worker must
  // close.
  const workers = page.workers();
  assert.ok(workers.length >= 1, 'a worker computes');
  t.diagnostic(`${workers.length} workers listed before cancel`);
  const closed = workers.map((w) => new Promise((resolve) => w.once('close', () => resolve(true))));
  await page.getByTestId('cancel').click();
  await page.locator('[data-testid="progress"][data-state="cancelled"]').waitFor({ timeout: 30_000 });
  assert.equal(
    await Promise.race([
      Promise.all(closed).then(() => true),
      new Promise((r) => setTimeout(() => r(false), 30_000).unref()),
    ]),
    true,
    'the computing worker (and its pool) is terminated',
  );
  for (const w of workers) {
    assert.ok(!page.workers().includes(w), 'the page no longer lists a stopped worker');
  }
  await page.getByTestId('cancelled').waitFor();
  await page.getByTestId('compute-again').waitFor();
  assert.equal(await page.getByTestId('cancel').count(), 0, 'no cancel button once cancelled');
  const a = { value: await valueNow(), text: await barText(page) };
  await page.waitForTimeout(1000);
  const b = { value: await valueNow(), text: await barText(page) };
  t.diagnostic(`after cancel: ${JSON.stringify(a)} then ${JSON.stringify(b)}`);
  assert.deepEqual(b, a, 'progress does not move after cancelling');
  assert.equal(await progressState(page), 'cancelled', 'still cancelled a second later');

  // Compute again: a new computation starts (then is cancelled again to end quickly).
  await page.getByTestId('compute-again').click();
  await page.locator('[data-testid="progress"][data-state="computing"]').waitFor({ timeout: 30_000 });
  await page.waitForFunction(
    () => /Reading files|Bootstrap/.test(document.querySelector('[data-testid="progress"]')?.textContent ?? ''),
    null,
    { timeout: 60_000, polling: 20 },
  );
  t.diagnostic(`computing again: ${await barText(page)}`);
  await page.getByTestId('cancel').click();
  await page.locator('[data-testid="progress"][data-state="cancelled"]').waitFor({ timeout: 30_000 });
  await page.getByTestId('compute-again').waitFor();
  await assertHealthy();
});
