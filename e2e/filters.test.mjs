// Filters that re-score (issue #30), in the app, on real released runs of
// ../shared/data/released-runs (skipped when absent), picked as one folder: two ToolSandbox
// runs whose scenarios differ, tau-bench and tau2 airline, two BFCL models. A metadata filter
// and the common-cohort box re-score the loaded corpus: the table and the report JSON equal
// the CLI's `score --filter … --common-tasks --json` on the same folder; the report states the
// filter (banner, exports); the pickers list the runs' metadata fields; a reload of the link
// restores the filter and shows the same figures; a bad filter shows its error and keeps the
// table; clearing the filter gives back the unfiltered report.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  DIST, EXAMPLE, ROOT, cliReport, cliReportBytes, compareTableToReport, computeAfter, download, ensureCli, launch,
  loadExample, openApp, readMainTable, setSetting, startServer, tempDir,
} from './lib.mjs';

const SHARED = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');
const RUNS = [
  'toolsandbox/agent_anthropic',
  'toolsandbox/agent_deepseek-ai',
  'tau-bench/gpt-4o-airline.json',
  'tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json',
  'bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/score/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_score.json',
];
const B = 500;
const META = 'meta.termination_reason!=max_turns';
const FILTER = `${META}; common`;

/** A copy of the runs under `<dir>/runs/…`, as the folder the user picks. */
function runsFolder(dir) {
  const root = path.join(dir, 'runs');
  for (const rel of RUNS) {
    fs.cpSync(path.join(SHARED, rel), path.join(root, rel), { recursive: true });
  }
  return root;
}

const reportJson = async (page) => JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));

/** What must be equal to the CLI's: every number, and the settings that state the filter. */
function assertSameReport(report, cli) {
  assert.deepEqual(report.settings, cli.settings);
  assert.deepEqual(report.conditions, cli.conditions);
  assert.deepEqual(report.paired, cli.paired);
  assert.deepEqual(report.ranks, cli.ranks);
  assert.deepEqual(report.notes, cli.notes);
}

async function applyFilter(page, text) {
  await page.getByTestId('filter-input').fill(text);
  return computeAfter(page, () => page.getByTestId('filter-apply').click(), 120_000);
}

test('a metadata filter and the common cohort re-score real runs as the CLI does; the link restores them; a bad filter keeps the table', { timeout: 600_000 }, async (t) => {
  if (!fs.existsSync(SHARED)) return t.skip(`shared data not found at ${SHARED}`);
  const dir = await tempDir(t);
  const root = runsFolder(dir);
  const cli = (extra) => JSON.parse(cliReportBytes(['runs'], { cwd: dir, bootstrap: B, seed: 0, extra }).toString('utf8'));
  const plain = cli([]);
  const filtered = cli(['--filter', META, '--common-tasks']);
  assert.equal(filtered.settings.filter, FILTER);
  assert.ok(filtered.conditions.length > 0 && filtered.conditions.length <= plain.conditions.length);
  assert.notDeepEqual(filtered.conditions, plain.conditions, 'the filter changes the figures');

  const { page, url, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 300_000);
  assertSameReport(await reportJson(page), plain);
  assert.equal(await page.getByTestId('filter-banner').count(), 0, 'no filter, no banner');

  // The pickers list the runs' metadata fields and write a clause into the text.
  await page.getByTestId('filter-pickers').locator('summary').click();
  await page.getByTestId('filter-field').waitFor({ state: 'visible', timeout: 60_000 });
  const fields = await page.getByTestId('filter-field').locator('option').allTextContents();
  for (const f of ['dataset', 'condition', 'outcome', 'label', 'meta.termination_reason', 'meta.format']) {
    assert.ok(fields.includes(f), `${f} among ${fields}`);
  }
  assert.ok(fields.some((f) => /^meta\.categor/.test(f)), `a category field among ${fields}`);
  await page.getByTestId('filter-field').selectOption('meta.termination_reason');
  const values = await page.getByTestId('filter-value').locator('option').allTextContents();
  assert.ok(values.some((v) => /^max_turns \(\d+\)$/.test(v)), `max_turns among ${values}`);
  await page.getByTestId('filter-value').selectOption('max_turns');
  await page.getByTestId('filter-add').click();
  assert.equal(await page.getByTestId('filter-input').inputValue(), 'meta.termination_reason=max_turns');

  // The metadata filter, then the common cohort: each re-scores the loaded corpus.
  await applyFilter(page, META);
  const metaOnly = cli(['--filter', META]);
  assertSameReport(await reportJson(page), metaOnly);
  // The rollout browser lists the kept rollouts only, and opens them.
  await page.getByTestId('tab-rollouts').click();
  const count = page.getByTestId('rollout-count');
  await count.waitFor({ state: 'visible', timeout: 30_000 });
  // A condition the filter took rollouts from.
  const key = (c) => `${c.dataset}\u001f${c.model}\u001f${c.method}`;
  const fullN = new Map(plain.conditions.map((c) => [key(c), c.n]));
  const shown = metaOnly.conditions.find((c) => c.n < fullN.get(key(c)));
  assert.ok(shown, 'the filter took rollouts from a condition');
  await page.getByTestId('rollout-condition').selectOption(key(shown));
  await page.waitForFunction(
    (n) => document.querySelector('[data-testid="rollout-count"]')?.textContent.startsWith(`${n} rollouts match`),
    shown.n,
    { timeout: 30_000 },
  );
  await page.getByTestId('rollout-row').first().click();
  await page.getByTestId('rollout-detail').waitFor({ state: 'visible', timeout: 30_000 });
  assert.doesNotMatch(await page.getByTestId('rollout-detail').innerText(), /Cannot show/);
  await page.getByTestId('tab-table').click();
  await computeAfter(page, () => page.getByTestId('filter-common').check(), 120_000);
  const report = await reportJson(page);
  assertSameReport(report, filtered);
  compareTableToReport(await readMainTable(page), filtered);
  const banner = await page.getByTestId('filter-banner').innerText();
  const kept = filtered.conditions.reduce((n, c) => n + c.n, 0);
  const all = plain.conditions.reduce((n, c) => n + c.n, 0);
  assert.ok(banner.includes(`Filtered: ${FILTER}`), banner);
  assert.ok(banner.includes(`${kept} of ${all} rollouts`), `${banner} (${kept} of ${all})`);
  assert.equal(await page.getByTestId('filter-input').inputValue(), FILTER);
  // The exports state it.
  const csv = (await download(page, 'export-csv')).bytes.toString('utf8');
  assert.ok(csv.split('\n')[0].endsWith(',filter'), csv.split('\n')[0]);
  assert.ok(csv.includes(FILTER));
  const tex = (await download(page, 'export-latex')).bytes.toString('utf8');
  assert.ok(tex.includes(FILTER));
  // In the link.
  const hash = await page.evaluate(() => location.hash);
  assert.ok(decodeURIComponent(hash).includes(`filter=${FILTER}`), hash);

  // A bad filter: its error, the text kept, the table unchanged.
  const before = await readMainTable(page);
  await page.getByTestId('filter-input').fill('colour=red; model=x');
  await page.getByTestId('filter-apply').click();
  const error = page.getByTestId('filter-error');
  await error.waitFor({ state: 'visible', timeout: 30_000 });
  assert.match(await error.innerText(), /filter clause "colour=red": unknown field "colour"/);
  assert.equal(await page.getByTestId('filter-input').inputValue(), 'colour=red; model=x');
  assert.deepEqual(await readMainTable(page), before);
  assert.ok(decodeURIComponent(await page.evaluate(() => location.hash)).includes(`filter=${FILTER}`));
  // A filter that keeps nothing: said on the progress line; the table stays.
  await page.getByTestId('filter-input').fill('task=no-such-task');
  await page.getByTestId('filter-apply').click();
  await page.waitForSelector('[data-testid=progress][data-state=failed]', { timeout: 60_000 });
  assert.match(await page.getByTestId('progress').innerText(), /keeps no rollout/);
  assert.deepEqual(await readMainTable(page), before);
  await assertHealthy();

  // A reload of the link: the filter is restored and the same figures come back.
  const link = url.split('#')[0] + hash;
  await page.goto('about:blank');
  await page.goto(link);
  await page.getByTestId('load-example').waitFor({ state: 'visible', timeout: 30_000 });
  await setSetting(page, 'settings-bootstrap', B);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(root), 300_000);
  assertSameReport(await reportJson(page), filtered);
  compareTableToReport(await readMainTable(page), filtered);
  assert.equal(await page.getByTestId('filter-input').inputValue(), FILTER);
  assert.ok(await page.getByTestId('filter-common').isChecked());

  // Clearing it gives back the whole report.
  await computeAfter(page, () => page.getByTestId('filter-clear').click(), 120_000);
  assertSameReport(await reportJson(page), plain);
  assert.equal(await page.getByTestId('filter-banner').count(), 0);
  assert.equal(await page.getByTestId('filter-input').inputValue(), '');
  await assertHealthy();
});

const SITE_B = 1000;
const SITE_FILTER = 'meta.category=multi_turn_base,retail,single_tool; trial=1';

/** Opens a site folder; waits for its agreement check. */
async function openSite(t, root) {
  const server = await startServer({ root, base: '/pub/' });
  const browser = await launch();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  await page.waitForSelector('[data-testid=site-verify][data-state=match], [data-testid=site-verify][data-state=differ]', { timeout: 60_000 });
  return page;
}

/** The site's page: agrees with its report, states the filter, shows the CLI's filtered numbers. */
async function checkSite(page, dir, filter) {
  assert.equal(await page.getByTestId('site-verify').getAttribute('data-state'), 'match');
  assert.ok((await page.getByTestId('filter-banner').innerText()).includes(`Filtered: ${filter}`));
  assert.equal(await page.getByTestId('filter-input').inputValue(), filter);
  const cli = cliReport(path.join(dir, 'data', 'rollouts.jsonl'), { bootstrap: SITE_B, extra: ['--filter', filter] });
  assert.equal(cli.settings.filter, filter);
  compareTableToReport(await readMainTable(page), cli);
}

test('sites carry the filter: `site --filter` and the app\'s "Download this report"', { timeout: 300_000 }, async (t) => {
  const tmp = await tempDir(t);
  // The CLI's site.
  const cliSite = path.join(tmp, 'cli-site');
  execFileSync(ensureCli(), [
    'site', EXAMPLE, '-o', cliSite, '--bootstrap', String(SITE_B), '--app', DIST, '--quiet', '--filter', SITE_FILTER,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  const manifest = JSON.parse(fs.readFileSync(path.join(cliSite, 'report.json'), 'utf8'));
  assert.equal(manifest.precomputed.settings.filter, SITE_FILTER);
  await checkSite(await openSite(t, cliSite), cliSite, SITE_FILTER);

  // The app's, with the filter applied on the page.
  const { page } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', SITE_B);
  await loadExample(page);
  await applyFilter(page, SITE_FILTER);
  const zip = await download(page, 'export-site');
  const appSite = path.join(tmp, 'app-site');
  fs.mkdirSync(appSite);
  fs.writeFileSync(path.join(tmp, 'site.zip'), zip.bytes);
  execFileSync('python3', ['-m', 'zipfile', '-e', path.join(tmp, 'site.zip'), appSite]);
  const published = JSON.parse(fs.readFileSync(path.join(appSite, 'report.json'), 'utf8'));
  assert.equal(published.precomputed.settings.filter, SITE_FILTER);
  await checkSite(await openSite(t, appSite), appSite, SITE_FILTER);
});
