// Finding where agents fail (issue #30, in the app): search, failure clusters and deep links on
// real released runs (two tau-bench airline runs of ../shared/data/released-runs, skipped when
// absent), picked as one folder. The search's hits equal `prefix-exec search … --json` on the
// same files and a hit opens its rollout at its step; a bad pattern says why and loses nothing;
// the clusters table's totals equal the report's `failure_clusters` and a cell opens exactly its
// rollouts; previous/next (buttons and keys) walk the list; a rollout's link opened in a fresh
// page, once the folder is picked there, opens that rollout at that step.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { DIST, EXAMPLE, ROOT, cliReportBytes, computeAfter, ensureCli, openApp, setSetting, startServer, tempDir, waitMounted } from './lib.mjs';

const SHARED = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');
const RUNS = [
  'tau-bench/gpt-4o-airline.json',
  'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-8B-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0808092844.json',
];
const B = 200;
const QUERY = 'not enough seats|payment method not found';

function airlineFolder(dir) {
  const root = path.join(dir, 'airline');
  for (const rel of RUNS) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.copyFileSync(path.join(SHARED, rel), path.join(root, rel));
  }
  return root;
}

/** The CLI's hits for the query, as the app lists them. */
function cliHits(dir, query, field, limit, input = 'airline') {
  const out = execFileSync(ensureCli(), ['search', input, '--query', query, '--field', field, '--json', '--quiet', '--limit', String(limit)], {
    cwd: dir,
    maxBuffer: 1 << 28,
  });
  return JSON.parse(out.toString('utf8'));
}

async function pageHits(page) {
  return page.getByTestId('search-hit').evaluateAll((rows) =>
    rows.map((tr) => ({
      cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
      mark: tr.querySelector('mark')?.textContent ?? '',
      rollout: Number(tr.dataset.rollout),
      step: tr.dataset.step,
    })),
  );
}

const asRow = (h) => ({
  cells: [`${h.dataset} / ${h.model} · ${h.method}`, h.task_id, String(h.trial), h.step == null ? 'message' : String(h.step), h.field, h.text],
  mark: [...h.text].slice(h.mark[0], h.mark[1]).join(''),
  rollout: h.rollout,
  step: h.step == null ? '' : String(h.step),
});

async function search(page, pattern, field = 'all') {
  await page.getByTestId('search-pattern').fill(pattern);
  await page.getByTestId('search-field').selectOption(field);
  const before = await page.getByTestId('search-count').getAttribute('data-seq').catch(() => null);
  await page.getByTestId('search-run').click();
  await page.waitForFunction(
    (b) => {
      const el = document.querySelector('[data-testid="search-count"]');
      const err = document.querySelector('[data-testid="search-error"]');
      const busy = document.querySelector('[data-testid="search-run"]')?.disabled;
      return !busy && (err || (el && el.getAttribute('data-seq') !== b));
    },
    before,
    { timeout: 60_000, polling: 50 },
  );
}

async function opened(page) {
  const detail = page.getByTestId('rollout-detail');
  await detail.waitFor({ timeout: 30_000 });
  return {
    index: Number(await detail.getAttribute('data-index')),
    position: await page.getByTestId('rollout-position').innerText(),
    focus: await detail.locator('[data-testid="step"][data-focus="true"] .depth').allInnerTexts(),
  };
}

test('search, clusters and deep links on a folder of released runs = the CLI', { timeout: 600_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const dir = await tempDir(t);
  const root = airlineFolder(dir);
  const { page, context, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 300_000);
  await page.getByTestId('tab-rollouts').click();

  // Search: the first page of hits is the CLI's, in its order, the match marked.
  await search(page, QUERY, 'error');
  // The first search waited for the worker's search index, and answered from it.
  assert.equal(await page.getByTestId('search-index').getAttribute('data-state'), 'ready');
  assert.match(await page.getByTestId('search-index').innerText(), /index of [\d,]+ rollouts/);
  const cli = cliHits(dir, QUERY, 'error', 1000);
  assert.ok(cli.length > 5, `${cli.length} hits`);
  assert.equal(Number(await page.getByTestId('search-count').getAttribute('data-total')), cli.length);
  assert.deepEqual(await pageHits(page), cli.slice(0, 50).map(asRow));
  const all = cliHits(dir, 'seats', 'all', 50);
  await search(page, 'seats', 'all');
  assert.deepEqual(await pageHits(page), all.map(asRow));
  // A bad pattern: the parser's message, the last hits still listed.
  await search(page, '(seats', 'all');
  // The browser's engine (regex-lite) words it its own way; the CLI's (regex) says "unclosed group".
  assert.match(await page.getByTestId('search-error').innerText(), /not a valid regular expression.*open group without closing/s);
  assert.equal(await page.getByTestId('search-hit').count(), all.length);
  assert.equal(await page.getByTestId('search-pattern').inputValue(), '(seats');

  // A hit opens its rollout at its step, highlighted.
  await search(page, QUERY, 'error');
  const hit = cli[3];
  await page.getByTestId('search-hit').nth(3).click();
  let o = await opened(page);
  assert.equal(o.index, hit.rollout);
  assert.deepEqual(o.focus, [String(hit.step)]);
  assert.match(o.position, new RegExp(`task ${hit.task_id} · trial ${hit.trial}$`));
  const focused = page.locator('[data-testid="rollout-detail"] [data-focus="true"]');
  assert.ok(await focused.isVisible());
  assert.match(await focused.innerText(), /not enough seats|payment method not found/i);
  assert.equal(await page.locator('[data-testid="rollout-row"].selected').getAttribute('data-task'), hit.task_id);

  // Its link, in a fresh page where the folder is picked again: the same rollout and step.
  const href = await page.getByTestId('rollout-link').getAttribute('href');
  assert.match(href, /tab=rollouts.*rtask=.*trial=\d+.*step=\d+/);
  const fresh = await context.newPage();
  await fresh.goto(href);
  await waitMounted(fresh);
  await setSetting(fresh, 'settings-bootstrap', B);
  await computeAfter(fresh, () => fresh.getByTestId('folder-input').setInputFiles(root), 300_000);
  const o2 = await opened(fresh);
  assert.deepEqual(o2, o);
  await fresh.close();

  // Previous/next through the list: the buttons, then j/k (not while typing in a field).
  const at = Number(o.position.split(' ')[0]);
  await page.getByTestId('rollout-next').click();
  await page.waitForFunction((p) => document.querySelector('[data-testid="rollout-position"]')?.innerText.startsWith(`${p} of`), at + 1);
  await page.locator('body').press('k');
  await page.waitForFunction((p) => document.querySelector('[data-testid="rollout-position"]')?.innerText.startsWith(`${p} of`), at);
  assert.equal((await opened(page)).index, hit.rollout);
  await page.keyboard.press('j');
  await page.waitForFunction((p) => document.querySelector('[data-testid="rollout-position"]')?.innerText.startsWith(`${p} of`), at + 1);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((p) => document.querySelector('[data-testid="rollout-position"]')?.innerText.startsWith(`${p} of`), at + 2);
  await page.getByTestId('search-pattern').focus();
  await page.keyboard.press('k');
  assert.equal(await page.getByTestId('search-pattern').inputValue(), `${QUERY}k`);
  await page.waitForTimeout(300);
  assert.ok((await page.getByTestId('rollout-position').innerText()).startsWith(`${at + 2} of`));
  // Presses in a row (a held key) each move on, without waiting for the worker, within the
  // page of the list shown (50 rollouts).
  if (((at + 1) % 50) + 3 < 50) {
    await page.evaluate(() => document.activeElement?.blur());
    for (let i = 0; i < 3; i++) await page.keyboard.press('j');
    await page.waitForFunction((p) => document.querySelector('[data-testid="rollout-position"]')?.innerText.startsWith(`${p} of`), at + 5);
  }

  // The clusters table: totals and cells as the report's failure_clusters.
  const report = JSON.parse(cliReportBytes(['airline'], { cwd: dir, bootstrap: B, seed: 0 }).toString('utf8'));
  await page.getByTestId('tab-labels').click();
  const table = page.getByTestId('cluster-table').first();
  await table.waitFor();
  const shown = await table.locator('[data-testid="cluster-row"]').evaluateAll((rows) =>
    rows.map((tr) => ({
      pattern: tr.children[2].textContent,
      total: Number(tr.querySelector('[data-testid="cluster-total"]').dataset.n),
      cells: [...tr.querySelectorAll('[data-testid="cluster-cell"]')].map((b) => [b.dataset.model, Number(b.dataset.n)]),
    })),
  );
  const expected = report.failure_clusters.filter((k) => k.dataset === 'tau-bench/airline').slice(0, 20);
  assert.deepEqual(
    shown,
    expected.map((k) => ({
      pattern: k.pattern,
      total: k.total,
      cells: report.conditions
        .filter((c) => c.dataset === k.dataset)
        .flatMap((c) => k.conditions.filter((x) => x.model === c.model && x.method === c.method).map((x) => [x.model, x.n])),
    })),
  );
  // A cell opens exactly its rollouts; a total, those of every condition.
  const k = expected.find((x) => x.conditions.length > 1);
  const row = table.locator('[data-testid="cluster-row"]').nth(expected.indexOf(k));
  const gpt = k.conditions.find((c) => c.model === 'gpt-4o');
  await row.locator('[data-testid="cluster-cell"][data-model="gpt-4o"]').click();
  await page.getByTestId('rollout-cluster').waitFor();
  await page.waitForFunction((n) => document.querySelector('[data-testid="rollout-count"]')?.innerText.startsWith(`${n} rollouts match`), gpt.n);
  assert.equal(await page.getByTestId('rollout-row').count(), gpt.n);
  // The restriction is in the URL: the link opens the same list once the folder is given.
  assert.match(page.url(), /cluster=/);
  const restricted = await context.newPage();
  await restricted.goto(page.url());
  await waitMounted(restricted);
  await setSetting(restricted, 'settings-bootstrap', B);
  await computeAfter(restricted, () => restricted.getByTestId('folder-input').setInputFiles(root), 300_000);
  await restricted.getByTestId('rollout-cluster').waitFor();
  await restricted.waitForFunction((n) => document.querySelector('[data-testid="rollout-count"]')?.innerText.startsWith(`${n} rollouts match`), gpt.n);
  await restricted.close();
  await page.getByTestId('tab-labels').click();
  await page.getByTestId('cluster-table').first().locator('[data-testid="cluster-row"]').nth(expected.indexOf(k)).getByTestId('cluster-total').click();
  await page.waitForFunction((n) => document.querySelector('[data-testid="rollout-count"]')?.innerText.startsWith(`${n} rollouts match`), k.total);
  // Sorting by a condition's column puts its largest count first.
  await page.getByTestId('tab-labels').click();
  await page.getByTestId('cluster-sort').nth(0).locator('button').click();
  const firstCol = await page
    .getByTestId('cluster-table')
    .first()
    .locator('[data-testid="cluster-row"]')
    .first()
    .locator('[data-testid="cluster-cell"]')
    .first()
    .getAttribute('data-n');
  const col = report.conditions.filter((c) => c.dataset === 'tau-bench/airline')[0];
  const most = Math.max(...report.failure_clusters.filter((x) => x.dataset === col.dataset).map((x) => x.conditions.find((c) => c.model === col.model)?.n ?? 0));
  assert.equal(Number(firstCol), most);

  // The folder as a .zip: the same hits, read back from the archive's members.
  execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2], "airline")', path.join(dir, 'airline'), dir]);
  await page.reload();
  await waitMounted(page);
  await setSetting(page, 'settings-bootstrap', B);
  await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(path.join(dir, 'airline.zip')), 300_000);
  await page.getByTestId('tab-rollouts').click();
  await search(page, QUERY, 'error');
  const zipped = cliHits(dir, QUERY, 'error', 50, 'airline.zip');
  assert.deepEqual(await pageHits(page), zipped.map(asRow));
  await page.getByTestId('search-hit').nth(1).click();
  assert.deepEqual((await opened(page)).focus, [String(zipped[1].step)]);

  // A published site (fetched data): a deep link to a step opens it on load, and search works.
  const site = path.join(dir, 'site');
  execFileSync(ensureCli(), ['site', EXAMPLE, '-o', site, '--bootstrap', String(B), '--app', DIST, '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const server = await startServer({ root: site, base: '/pub/' });
  t.after(() => server.close());
  const exampleHits = cliHits(path.dirname(EXAMPLE), '^mkdir$', 'tool', 50, path.basename(EXAMPLE));
  const target = exampleHits.find((h) => h.step > 1) ?? exampleHits[0];
  const hash = new URLSearchParams({
    tab: 'rollouts',
    cond: [target.dataset, target.model, target.method].join('\u001f'),
    rtask: target.task_id,
    trial: String(target.trial),
    step: String(target.step),
  }).toString().replace(/\+/g, '%20');
  const pub = await context.newPage();
  await pub.goto(`${server.url}#${hash}`);
  const o3 = await opened(pub);
  assert.equal(o3.index, target.rollout);
  assert.deepEqual(o3.focus, [String(target.step)]);
  await search(pub, '^mkdir$', 'tool');
  assert.deepEqual(await pageHits(pub), exampleHits.map(asRow));
  await pub.close();
  await assertHealthy();
});
