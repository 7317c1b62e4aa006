// README screenshots of a leaderboard comparison of real released runs (not a test): the
// tau-bench and tau2 airline runs and the BFCL multi-turn base runs of gpt-oss-20b and
// glyphh-ada from ../shared/data/released-runs, in headless Chromium. Writes
// docs/screenshot-leaderboard.png (main table, leaderboard layout), docs/screenshot-overlay.png
// (survival curves overlaid), docs/screenshot-compare.png (paired comparison) and
// docs/screenshot-aligned.png (a task's two rollouts aligned call by call);
// then the whole folder picked at once: docs/screenshot-folder.png (the file list grouped by run,
// the table with its Crashed column, at 1,280 px) and docs/screenshot-problems.png (its input
// problems by kind, and apart from them the self-checks that passed); then the shared message transcripts
// (generic/: Toolathlon, AgentDojo-style, an SGLang export) picked as a folder:
// docs/screenshot-transcripts.png (the mappings the files were read with, and the table); the
// folder as one .tar.gz dropped: docs/screenshot-archive.png, and opened as a `?data=` link
// while it downloads: docs/screenshot-link.png.
// Then the Ranks view and the cost frontier of the tau-bench and tau2 airline runs picked as one
// folder, at 1,280 px: docs/screenshot-ranks.png and docs/screenshot-frontier.png; then, on the
// same runs, the failure clusters, a search and a filter: docs/screenshot-clusters.png,
// docs/screenshot-search.png, docs/screenshot-filter.png.
// Run: node e2e/screenshots.mjs [leaderboard|folder|archive|link|transcripts|ranks] (after building
// the app; all of them without an argument).

import fs from 'node:fs';
import path from 'node:path';

import os from 'node:os';

import { ROOT, computeAfter, openApp, setSetting } from './lib.mjs';

const SHARED = path.resolve(ROOT, '..', 'shared', 'data', 'released-runs');
const REAL = [
  'tau-bench/gpt-4o-airline.json',
  'tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json',
  'bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json',
  'bfcl/gorilla-pr1308-glyphh-ada-1.1/score/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_score.json',
];

if (!fs.existsSync(SHARED)) {
  console.log(`skipped: shared data not found at ${SHARED}`);
  process.exit(0);
}
const only = process.argv[2];
const wanted = (part) => !only || only === part;
if (wanted('leaderboard')) {
const app = await openApp(null);
const { page } = app;
try {
  await page.setViewportSize({ width: 1400, height: 900 });
  await setSetting(page, 'settings-bootstrap', 2000);
  await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(REAL.map((r) => path.join(SHARED, r))), 240_000);
  const shot = async (name) => {
    await page.waitForTimeout(400);
    await page.screenshot({ path: path.join(ROOT, 'docs', name) });
    console.log(`wrote docs/${name}`);
  };
  await page.getByTestId('tab-table').click();
  await shot('screenshot-leaderboard.png');
  await page.getByTestId('tab-curves').click();
  await page.getByTestId('pec-plot').first().waitFor();
  await page.getByTestId('filter-dataset').selectOption('bfcl/multi_turn_base');
  await shot('screenshot-overlay.png');
  await page.getByTestId('filter-dataset').selectOption('');
  await page.getByTestId('tab-compare').click();
  const pick = async (id, v) => {
    await page.getByTestId(id).locator(`option[value="${v}"]`).waitFor({ state: 'attached' });
    await page.getByTestId(id).selectOption(v);
  };
  await pick('compare-dataset', 'bfcl/multi_turn_base');
  await pick('compare-model', 'glyphh-ada-1.1');
  await pick('compare-a', 'fc');
  await pick('compare-b-model', 'openai_gpt-oss-20b');
  await pick('compare-b', 'fc');
  await page.getByTestId('pair-task').first().click();
  await page.getByTestId('side-by-side').locator('[data-testid="step"]').first().waitFor();
  await shot('screenshot-compare.png');
  // A task where one model stays executable and the other breaks, aligned call by call.
  const differs = await page.getByTestId('pair-task-differs').allInnerTexts();
  await page.getByTestId('pair-task').nth(Math.max(0, differs.indexOf('executability'))).click();
  await page.getByTestId('aligned').locator('tr.first-difference').waitFor();
  await page.getByTestId('side-by-side').evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await shot('screenshot-aligned.png');
} finally {
  await app.close();
}
}

// The whole shared folder, picked as one folder (a leaderboard as released), at 1,280 px.
if (wanted('folder')) {
const whole = await openApp(null);
try {
  const p = whole.page;
  await p.setViewportSize({ width: 1280, height: 900 });
  await setSetting(p, 'settings-bootstrap', 2000);
  await computeAfter(p, () => p.getByTestId('folder-input').setInputFiles(SHARED), 540_000);
  await p.getByTestId('tab-table').click();
  await p.waitForTimeout(400);
  await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-folder.png') });
  console.log('wrote docs/screenshot-folder.png');
  // The same folder's input problems by kind, and apart from them the self-checks that passed.
  await p.getByTestId('check-list').locator('summary').click();
  const errors = p.getByTestId('error-list');
  await errors.scrollIntoViewIfNeeded();
  const a = await errors.boundingBox();
  const b = await p.getByTestId('check-list').boundingBox();
  const scroll = await p.evaluate(() => window.scrollY);
  await p.screenshot({
    path: path.join(ROOT, 'docs', 'screenshot-problems.png'),
    fullPage: true,
    clip: { x: a.x - 4, y: a.y + scroll - 4, width: Math.max(a.width, b.width) + 8, height: Math.min(b.y + b.height - a.y + 8, 1400) },
  });
  console.log('wrote docs/screenshot-problems.png');
} finally {
  await whole.close();
}
}

// The same folder as one archive, as runs are downloaded: packed here as a .tar.gz (in the
// system's temporary folder, never committed) and dropped, at 1,280 px:
// docs/screenshot-archive.png (the file list named by the archive's members, the table).
if (wanted('archive')) {
  const { execFileSync } = await import('node:child_process');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prefix-exec-archive-'));
  const archive = path.join(tmp, 'released-runs.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', path.dirname(SHARED), path.basename(SHARED)]);
  const ar = await openApp(null);
  try {
    const p = ar.page;
    await p.setViewportSize({ width: 1280, height: 900 });
    await setSetting(p, 'settings-bootstrap', 2000);
    await computeAfter(p, () => p.getByTestId('file-input').setInputFiles(archive), 540_000);
    await p.getByTestId('tab-table').click();
    await p.waitForTimeout(400);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-archive.png') });
    console.log('wrote docs/screenshot-archive.png');
  } finally {
    await ar.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// The same archive opened as a `?data=` link, its body served at 4 MB/s as a download comes:
// docs/screenshot-link.png, taken while the last bytes are still on their way (the progress line
// names the members read so far). The report, once ready, is checked against the CLI's.
if (wanted('link')) {
  const { execFileSync } = await import('node:child_process');
  const { cliReportBytes } = await import('./lib.mjs');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prefix-exec-link-'));
  const archive = path.join(tmp, 'released-runs.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', path.dirname(SHARED), path.basename(SHARED)]);
  const body = fs.readFileSync(archive);
  let sent = 0;
  const route = async (req, res, pathname) => {
    if (pathname !== '/runs/released-runs.tar.gz') return false;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, 'Cache-Control': 'no-store' });
    const start = Date.now();
    for (let at = 0; at < body.length; at += 64 << 10) {
      const piece = body.subarray(at, Math.min(at + (64 << 10), body.length));
      if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
      sent = at + piece.length;
      const wait = start + (sent / 4e6) * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    res.end();
    return true;
  };
  const ln = await openApp(null, { route });
  try {
    const p = ln.page;
    await p.setViewportSize({ width: 1280, height: 900 });
    await p.goto(`${ln.url}?data=runs/released-runs.tar.gz`);
    let text = '';
    for (let i = 0; i < 600; i++) {
      text = await p.getByTestId('progress').innerText().catch(() => '');
      const m = text.match(/([\d,]+) members/);
      if (m && Number(m[1].replace(/,/g, '')) > 200 && sent < body.length * 0.8) break;
      await p.waitForTimeout(50);
    }
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-link.png'), clip: { x: 0, y: 0, width: 1280, height: 420 } });
    console.log(`wrote docs/screenshot-link.png at ${(sent / 1e6).toFixed(1)} of ${(body.length / 1e6).toFixed(1)} MB sent: ${text.trim()}`);
    await p.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, { timeout: 540_000 });
    const dl = await Promise.all([p.waitForEvent('download'), p.getByTestId('export-report-json').click()]);
    const r = JSON.parse(fs.readFileSync(await dl[0].path(), 'utf8'));
    const cli = JSON.parse(cliReportBytes(['released-runs.tar.gz'], { cwd: tmp }).toString('utf8'));
    const same = ['conditions', 'paired', 'notes', 'problems'].every((k) => JSON.stringify(r[k]) === JSON.stringify(cli[k]));
    console.log(`?data= report: ${r.conditions.length} conditions; the CLI's on the same archive: ${same ? 'the same' : 'DIFFERENT'}`);
  } finally {
    await ln.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// The shared message transcripts picked as one folder, at 1,280 px: the settings' transcript
// panel (each mapping the files were read with) beside the main table.
if (wanted('transcripts')) {
  const tr = await openApp(null);
  try {
    const p = tr.page;
    await p.setViewportSize({ width: 1280, height: 1100 });
    await setSetting(p, 'settings-bootstrap', 2000);
    await computeAfter(p, () => p.getByTestId('folder-input').setInputFiles(path.join(SHARED, 'generic')), 240_000);
    await p.getByTestId('tab-table').click();
    await p.waitForTimeout(400);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-transcripts.png'), fullPage: true });
    console.log('wrote docs/screenshot-transcripts.png');
  } finally {
    await tr.close();
  }
}

// The airline runs of tau-bench (4) and tau2 (4), copied into one folder and picked whole, at
// 1,280 px: the Ranks tab (both datasets' panels) and the cost frontier of the tau2 runs.
if (wanted('ranks')) {
  const AIRLINE = [
    'tau-bench/gpt-4o-airline.json',
    'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-235B-A22B-Thinking-2507-FP8-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816084901.json',
    'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-8B-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0808092844.json',
    'tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-gpt-4.1-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816022412.json',
    'tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json',
    'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-07-25T09-08-37.941596_airline_llm_agent_gpt-4o-mini_user_simulator_gpt-4o-mini.json',
    'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-12T21-04-49.372563_airline_llm_agent_Kimi-K2-Instruct_user_simulator_gpt-4o-20240806.json',
    'tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-13T13-52-31.016323_airline_llm_agent_models--Qwen--Qwen3-32B_user_simulator_gpt-4o-20240806.json',
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prefix-exec-shots-'));
  const root = path.join(dir, 'airline');
  for (const rel of AIRLINE) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.copyFileSync(path.join(SHARED, rel), path.join(root, rel));
  }
  const app = await openApp(null);
  try {
    const p = app.page;
    await p.setViewportSize({ width: 1280, height: 900 });
    await setSetting(p, 'settings-bootstrap', 10000);
    await computeAfter(p, () => p.getByTestId('folder-input').setInputFiles(root), 540_000);
    await p.getByTestId('tab-ranks').click();
    await p.getByTestId('rank-panel').first().waitFor();
    await p.waitForTimeout(600);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-ranks.png'), fullPage: true });
    console.log('wrote docs/screenshot-ranks.png');
    await p.getByTestId('tab-cost').click();
    await p.getByTestId('cost-field').selectOption('tokens');
    await p.getByTestId('frontier').scrollIntoViewIfNeeded();
    await p.waitForTimeout(600);
    await p.getByTestId('frontier').screenshot({ path: path.join(ROOT, 'docs', 'screenshot-frontier.png') });
    console.log('wrote docs/screenshot-frontier.png');
    // Finding failures (#30) on the same runs: the failure clusters, a search, a filter.
    await p.getByTestId('tab-labels').click();
    await p.getByTestId('cluster-table').first().waitFor();
    await p.getByTestId('failure-clusters').scrollIntoViewIfNeeded();
    await p.waitForTimeout(400);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-clusters.png') });
    console.log('wrote docs/screenshot-clusters.png');
    await p.getByTestId('tab-rollouts').click();
    await p.getByTestId('search-pattern').fill('not (found|available)');
    await p.getByTestId('search-field').selectOption('error');
    await p.getByTestId('search-run').click();
    await p.getByTestId('search-hit').first().waitFor({ timeout: 120_000 });
    await p.getByTestId('search-panel').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await p.waitForTimeout(800);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-search.png') });
    console.log('wrote docs/screenshot-search.png');
    await p.getByTestId('tab-table').click();
    await p.getByTestId('filter-input').fill('outcome!=crashed; common');
    await computeAfter(p, () => p.getByTestId('filter-apply').click(), 540_000);
    await p.waitForTimeout(400);
    await p.screenshot({ path: path.join(ROOT, 'docs', 'screenshot-filter.png') });
    console.log('wrote docs/screenshot-filter.png');
  } finally {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
