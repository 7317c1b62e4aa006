// Readable at 1,280 px (#27, part 5). A leaderboard of 13 conditions whose model names are long
// (cache paths of a Hugging Face snapshot, written as they are), picked as a folder of a
// repository extracted under one top folder, at a 1,280 × 800 window:
// - the main table's first column is bounded (the whole name in its title) and the condition
//   column, TER, AUC-PEC and final success, intervals shown, lie on the first screen, with no
//   horizontal scroll of the page or of the table;
// - the overlaid survival curves are told apart beyond the palette's 7 colours (each legend
//   chip's colour, dash and marker differ), and a chip under the pointer highlights its curve;
// - the rollout list's Success column is on screen beside an open rollout, long task ids clipped;
// - the settings' inputs lie inside their panel;
// - the file list names each results.jsonl by the folder that tells it apart, not by the shared
//   top folder, the full path on hover.
// And the shared released runs (when present), picked whole, read the same way.
// NARROW_SHOTS=<folder> writes a screenshot of each view into that folder, to look at.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ROOT, computeAfter, openApp, setSetting, tempDir } from './lib.mjs';

const WIDTH = 1280;
const HEIGHT = 800;
const TOP = 'agent_hard_benchmark-face722e';
const DATASET = 'tau-bench/retail';
const HF = '/nethome/someuser/.cache/huggingface/models--Qwen--Qwen3-32B/snapshots/0123abcdef0123abcdef0123abcdef0123abcd/';
const MODELS = [
  HF,
  '_data_jibf_.cache_huggingface_hub_models--Qwen--Qwen3-32B_snapshots_0123abcd_',
  'claude-4-sonnet-thinking-off',
  'claude-4-sonnet-thinking-on',
  'DeepSeek-V3-0324',
  'gemini-2.5-pro',
  'gpt-4.1',
  'o3-high',
  'o4-mini-high',
  'Qwen3-235B-A22B-Thinking-2507-FP8',
  'Kimi-K2-Instruct',
  'Llama-4-Maverick-17B-128E-Instruct-FP8',
  'mistral-large-2411',
];
const TASKS = 12;

/** A model's folder in the fixture (one folder per run, each holding a results.jsonl). */
const folderOf = (model) => model.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 60);

/**
 * Two trials of every task for `model` (so the pass^k column shows), a crash or two: five
 * steps, the first rejected one (if any) at a depth that varies with the model, so that the 13
 * survival curves differ.
 */
function runLines(model, m) {
  const lines = [];
  for (let task = 0; task < TASKS; task++) {
    for (let trial = 0; trial < 2; trial++) {
      const crash = task === 0 && trial === 1 && m % 4 === 0;
      const at = (task * 5 + m * 3 + trial) % (6 + (m % 5)); // 0..4: the rejected step; else none
      const steps = crash
        ? []
        : Array.from({ length: 5 }, (_, d) =>
            d === at
              ? {
                  tool: 'exchange_delivered_order_items',
                  args: { order_id: `#W${1000 + task}` },
                  ok: false,
                  error: 'Error: the payment method of the original order cannot pay the price difference of the new items, and no gift card was given',
                  label: 'precondition',
                }
              : { tool: d === 0 ? 'get_order_details' : 'get_product_details', args: { order_id: `#W${1000 + task}` }, ok: true },
          );
      lines.push(
        JSON.stringify({
          dataset: DATASET,
          task_id: `retail-${task}-exchange-the-delivered-items-for-the-same-items-in-another-colour-and-size`,
          model,
          method: 'tool-calling',
          success: !crash && (at > 4 || (task + trial) % 2 === 0),
          steps,
          ...(crash ? { crash: 'provider error: 529 overloaded' } : {}),
        }),
      );
    }
  }
  return lines.join('\n') + '\n';
}

/** The fixture: <tmp>/<TOP>/runs/<model>/results.jsonl; returns the folder to pick. */
function writeFixture(dir) {
  const root = path.join(dir, TOP);
  MODELS.forEach((model, m) => {
    const folder = path.join(root, 'runs', folderOf(model));
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'results.jsonl'), runLines(model, m));
  });
  return root;
}

/** Bounding boxes (viewport coordinates) of the elements matching `selector`. */
function boxes(page, selector) {
  return page.evaluate(
    (selector) => [...document.querySelectorAll(selector)].map((e) => e.getBoundingClientRect().toJSON()),
    selector,
  );
}

/** Whether `box` lies wholly inside the rectangle `within` (1 px of rounding allowed). */
const inside = (box, within) =>
  box.left >= within.left - 1 && box.right <= within.right + 1 && box.top >= within.top - 1 && box.bottom <= within.bottom + 1;

const SCREEN = { left: 0, top: 0, right: WIDTH, bottom: HEIGHT };

/** A screenshot of the window (or of `locator`) into $NARROW_SHOTS, when set. */
async function shot(page, name, locator) {
  const dir = process.env.NARROW_SHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.waitForTimeout(300);
  await (locator ?? page).screenshot({ path: path.join(dir, `${name}.png`) });
}

/**
 * The main table on the first screen: no horizontal scroll (page or table), the first column
 * bounded with each row's whole name in its title, and the condition column, TER, AUC-PEC and
 * final success (header and first row, with its interval) inside the window. Returns the
 * first column's widest cell.
 */
async function checkMainTable(page, t) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const table = page.getByTestId('main-table');
  await table.waitFor();
  const scroll = await page.evaluate(() => {
    const wrap = document.querySelector('.table-wrap');
    return {
      page: document.documentElement.scrollWidth - window.innerWidth,
      table: wrap.scrollWidth - wrap.clientWidth,
    };
  });
  assert.ok(scroll.page <= 0, `the page scrolls sideways by ${scroll.page}px`);
  t.diagnostic(`main table: ${scroll.table}px wider than its panel`);
  const cols = ['ter', 'auc_pec', 'final_success'];
  const first = page.locator('[data-testid=main-table] tbody tr[data-model]').first();
  const heads = [
    ['condition column', page.locator('[data-testid=main-table] thead th').first()],
    ...cols.map((c) => [`${c} header`, page.getByTestId(`sort-${c}`).locator('xpath=..')]),
    ['first row name', first.locator('th[scope=row]')],
    ...cols.map((c) => [`first row ${c}`, first.locator(`td[data-col=${c}]`)]),
  ];
  for (const [what, locator] of heads) {
    const box = await locator.evaluate((e) => e.getBoundingClientRect().toJSON());
    assert.ok(inside(box, SCREEN), `${what} on the first screen: ${JSON.stringify(box)}`);
  }
  // Intervals shown, under their values.
  const ci = first.locator('td[data-col=final_success] .ci');
  if ((await ci.count()) > 0) {
    const [value, interval] = await first.locator('td[data-col=final_success]').evaluate((td) => {
      const range = document.createRange();
      range.selectNodeContents(td.firstChild);
      return [range.getBoundingClientRect().toJSON(), td.querySelector('.ci').getBoundingClientRect().toJSON()];
    });
    assert.ok(interval.top >= value.bottom - 1, 'the interval sits under its value');
  }
  // A bounded first column; each name whole in its title.
  const names = await page.locator('[data-testid=main-table] tbody th[scope=row]').evaluateAll((ths) =>
    ths.map((th) => {
      const tr = th.closest('tr');
      // The leaderboard's rows are named "model / method"; the paper's by their method.
      const name = tr.closest('table').dataset.layout === 'leaderboard' ? `${tr.dataset.model} / ${tr.dataset.method}` : tr.dataset.method;
      return { width: th.getBoundingClientRect().width, title: th.title, name };
    }),
  );
  assert.ok(names.length > 0);
  const widest = Math.max(...names.map((n) => n.width));
  assert.ok(widest <= 300, `the first column is ${widest}px wide`);
  // The whole name in the title (a model read from a local path also says which).
  for (const n of names) assert.ok(n.title.startsWith(n.name), `the whole name in the title: ${n.title}`);
  return { widest, names };
}

/** Every input and select of the settings grid lies inside the settings panel. */
async function checkSettings(page) {
  const panel = await page.locator('section.settings').evaluate((e) => e.getBoundingClientRect().toJSON());
  const inputs = await page.locator('section.settings .grid').evaluate((grid) =>
    [...grid.querySelectorAll('input, select')].map((e) => ({ id: e.id, box: e.getBoundingClientRect().toJSON() })),
  );
  assert.ok(inputs.length >= 8, `${inputs.length} settings`);
  for (const { id, box } of inputs) assert.ok(inside(box, panel), `#${id} inside the settings panel: ${JSON.stringify({ box, panel })}`);
}

test('13 conditions with long model names at 1,280 px: table, curves, rollouts, settings and files read right', { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t);
  const root = writeFixture(dir);
  const { page, assertHealthy } = await openApp(t);
  await page.setViewportSize({ width: WIDTH, height: HEIGHT });
  await setSetting(page, 'settings-bootstrap', 200);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 180_000);

  // The main table: leaderboard layout (one method per model), every condition a row.
  assert.equal(await page.getByTestId('main-table').getAttribute('data-layout'), 'leaderboard');
  assert.equal(await page.locator('[data-testid=main-table] tbody tr[data-model]').count(), MODELS.length);
  assert.equal(await page.locator('[data-testid=main-table] td[data-col=crashed]').count(), MODELS.length, 'the Crashed column shows');
  assert.equal(await page.locator('[data-testid=main-table] td[data-col=pass_hat]').count(), MODELS.length, 'the pass^k column shows');
  const { widest, names } = await checkMainTable(page, t);
  t.diagnostic(`first column ${widest.toFixed(0)}px at most`);
  await shot(page, 'table');
  await shot(page, 'side', page.locator('aside.side'));
  const long = names.find((n) => n.name.startsWith(HF));
  assert.ok(long, 'the long model’s row');
  assert.equal(long.title, `${HF} / tool-calling`);
  // Every other column stays reachable inside the table's panel.
  const lastCol = page.locator('[data-testid=main-table] tbody tr[data-model]').first().locator('td').last();
  await lastCol.scrollIntoViewIfNeeded();
  const wrap = await page.locator('.table-wrap').evaluate((e) => e.getBoundingClientRect().toJSON());
  assert.ok(inside(await lastCol.evaluate((e) => e.getBoundingClientRect().toJSON()), wrap), 'the last column can be scrolled into the panel');
  await checkSettings(page);

  // The file list: 13 results.jsonl, each named by its run's folder, not by the shared top one.
  const items = await page.getByTestId('file-item').evaluateAll((lis) =>
    lis.map((li) => ({
      folder: li.querySelector('[data-testid=file-folder]')?.textContent ?? '',
      base: li.querySelector('.file-base')?.textContent ?? '',
      title: li.querySelector('.file-name')?.title ?? '',
    })),
  );
  assert.equal(items.length, MODELS.length);
  assert.equal(new Set(items.map((i) => i.folder)).size, MODELS.length, `distinct folders: ${JSON.stringify(items.map((i) => i.folder))}`);
  for (const item of items) {
    assert.equal(item.base, 'results.jsonl');
    assert.ok(!item.folder.includes(TOP) && !item.folder.includes('runs/'), `the shared folders left out: ${item.folder}`);
    assert.ok(item.title.endsWith(`${TOP}/runs/${item.folder.replace(/^…\//, '')}results.jsonl`), `${item.title} is the full path of ${item.folder}`);
  }
  assert.ok(items.some((i) => i.folder === `…/${folderOf('o3-high')}/`), JSON.stringify(items.map((i) => i.folder)));
  const listBox = await page.getByTestId('file-list').evaluate((e) => e.getBoundingClientRect().toJSON());
  for (const b of await boxes(page, '[data-testid=file-item] .file-name > *')) {
    assert.ok(b.left >= listBox.left - 1 && b.right <= listBox.right + 1, `a file name inside the list: ${JSON.stringify(b)}`);
  }

  // Overlaid survival curves: 13 series, each chip's colour, dash and marker together unique;
  // the colours repeat after 7, the dash does not.
  await page.getByTestId('tab-curves').click();
  await page.getByTestId('pec-plot').first().waitFor();
  const figure = page.locator('figure.plot').first();
  const chips = await figure.getByTestId('legend-item').evaluateAll((bs) =>
    bs.map((b) => {
      const [color, dash, marker] = b.dataset.style.split(' ');
      return { label: b.textContent.trim(), title: b.title, color, dash, marker, box: b.getBoundingClientRect().toJSON() };
    }),
  );
  assert.equal(chips.length, MODELS.length);
  const styles = chips.map((c) => `${c.color}|${c.dash}|${c.marker}`);
  assert.equal(new Set(styles).size, chips.length, `distinct styles: ${JSON.stringify(styles)}`);
  assert.equal(chips[0].color, chips[7].color, 'the palette repeats after 7 colours');
  assert.notEqual(chips[0].dash, chips[7].dash, '… and the dash tells the two apart');
  for (const c of chips) {
    assert.equal(c.title, c.label, 'the whole name on hover');
    assert.ok(c.box.right <= WIDTH, `a legend chip inside the window: ${JSON.stringify(c.box)}`);
  }
  // Hovering a chip highlights its curve (the canvas is redrawn); leaving it restores the plot.
  const canvas = figure.getByTestId('pec-plot');
  const drawn = () => canvas.evaluate((c) => c.toDataURL());
  /** Waits until the first plot is (`same`) or is not the plot drawn without a highlight. */
  const plotIs = (same) =>
    page.waitForFunction((same) => (document.querySelector('[data-testid=pec-plot]').toDataURL() === window.__plain) === same, same);
  await page.mouse.move(5, HEIGHT - 5);
  await page.waitForTimeout(200);
  await shot(page, 'curves', canvas);
  const plain = await drawn();
  await canvas.evaluate((c) => {
    window.__plain = c.toDataURL();
  });
  await figure.getByTestId('legend-item').nth(7).hover();
  await plotIs(false);
  const lit = await drawn();
  await shot(page, 'curves-highlight', canvas);
  assert.notEqual(lit, plain, 'the highlighted plot differs');
  await page.mouse.move(5, HEIGHT - 5);
  await plotIs(true);
  assert.equal(await drawn(), plain, 'the same plot again (deterministic)');
  // Keyboard focus highlights too (another curve: another plot); leaving the chip restores it.
  await figure.getByTestId('legend-item').nth(2).focus();
  await plotIs(false);
  assert.notEqual(await drawn(), lit);
  await figure.getByTestId('legend-item').nth(2).blur();
  await plotIs(true);
  // A click still hides and shows the series.
  await figure.getByTestId('legend-item').nth(2).click();
  assert.equal(await figure.getByTestId('legend-item').nth(2).getAttribute('aria-pressed'), 'false');
  await figure.getByTestId('legend-item').nth(2).click();
  assert.equal(await figure.getByTestId('legend-item').nth(2).getAttribute('aria-pressed'), 'true');

  // The rollout list of the long-named condition, a rollout open beside it: Success on screen.
  await page.getByTestId('tab-rollouts').click();
  const key = `${DATASET}\u001f${HF}\u001ftool-calling`;
  await page.getByTestId('rollout-condition').locator('option').first().waitFor({ state: 'attached' });
  await page.getByTestId('rollout-condition').selectOption(key);
  await page.getByTestId('rollout-row').first().waitFor();
  await page.getByTestId('rollout-row').first().click();
  await page.getByTestId('rollout-detail').waitFor();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'rollouts');
  const list = await page.locator('.browser .list').evaluate((e) => e.getBoundingClientRect().toJSON());
  const visible = { left: Math.max(0, list.left), right: Math.min(WIDTH, list.right), top: 0, bottom: HEIGHT };
  const row = page.getByTestId('rollout-row').first();
  const success = await page.locator('table.rollouts thead th').nth(3);
  assert.equal((await success.textContent()).trim(), 'Success');
  for (const [what, locator] of [
    ['Success header', success],
    ['Task of the first row', row.locator('td').nth(0)],
    ['Success of the first row', row.locator('td').nth(3)],
  ]) {
    const box = await locator.evaluate((e) => e.getBoundingClientRect().toJSON());
    assert.ok(inside(box, visible), `${what} on screen beside the open rollout: ${JSON.stringify({ box, visible })}`);
  }
  const task = row.locator('td').first();
  assert.match(await task.getAttribute('title'), /^retail-\d+-exchange-the-delivered-items/, 'the whole task id on hover');
  assert.ok((await task.evaluate((e) => e.getBoundingClientRect().width)) <= 260, 'the Task column is bounded');
  await assertHealthy();
});

const SHARED = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');

test('the released runs picked whole at 1,280 px: the headline columns on the first screen, settings inside their panel', { timeout: 600_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const { page, assertHealthy } = await openApp(t);
  await page.setViewportSize({ width: WIDTH, height: HEIGHT });
  await setSetting(page, 'settings-bootstrap', 200);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(SHARED), 540_000);
  for (const layout of ['leaderboard', 'paper']) {
    await page.getByTestId('table-layout').selectOption(layout);
    const { widest } = await checkMainTable(page, t);
    t.diagnostic(`${layout}: first column ${widest.toFixed(0)}px at most`);
    await shot(page, `released-${layout}`);
  }
  await checkSettings(page);
  await shot(page, 'released-side', page.locator('aside.side'));
  // No file-list entry is named by the folder every file shares.
  const top = path.basename(SHARED);
  const folders = await page.getByTestId('file-folder').allTextContents();
  assert.ok(!folders.some((f) => f.startsWith(`${top}/`)), JSON.stringify(folders.slice(0, 5)));
  await assertHealthy();
});
