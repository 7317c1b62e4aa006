// The page stays responsive while the worker computes (this fails if the scoring ran on the main
// thread), and a settings change in mid-computation cancels and restarts cleanly.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { download, ensureGrid, openApp, setSetting, waitReady } from './lib.mjs';

const MIN_FRAMES = 10;
const MAX_GAP_MS = 250;

/** Installs a requestAnimationFrame heartbeat and a log of progress data-state changes. */
function installHeartbeat(page) {
  return page.evaluate(() => {
    const hb = { frames: [], states: [], marks: {} };
    window.__hb = hb;
    const tick = () => {
      hb.frames.push(performance.now());
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const el = document.querySelector('[data-testid="progress"]');
    hb.states.push([el.getAttribute('data-state'), performance.now()]);
    new MutationObserver(() => hb.states.push([el.getAttribute('data-state'), performance.now()])).observe(el, {
      attributes: true,
      attributeFilter: ['data-state'],
    });
  });
}

/** Frames and longest frame gap between t0 and t1 (the interval's ends count as beats). */
function frameStats(frames, t0, t1) {
  const inside = frames.filter((f) => f > t0 && f < t1);
  const beats = [t0, ...inside, t1];
  let maxGap = 0;
  for (let i = 1; i < beats.length; i++) maxGap = Math.max(maxGap, beats[i] - beats[i - 1]);
  return { frames: inside.length, maxGap, duration: t1 - t0 };
}

test('the page keeps rendering frames while the worker computes; a mid-computation seed change restarts cleanly', { timeout: 240_000 }, async (t) => {
  const grid = ensureGrid(3); // 20,304 rollouts, ~10 MB
  const { page, assertHealthy } = await openApp(t);
  assert.equal(await page.getByTestId('settings-bootstrap').inputValue(), '10000');
  await installHeartbeat(page);

  // 1. A full 10,000-resample computation: frames must keep coming.
  await page.getByTestId('file-input').setInputFiles(grid);
  const done = await waitReady(page, 180_000);
  const hb1 = await page.evaluate(() => window.__hb);
  const start = hb1.states.find(([s]) => s === 'computing')?.[1];
  const end = hb1.states.find(([s]) => s === 'ready')?.[1];
  assert.ok(start !== undefined && end !== undefined && end > start, `state log: ${JSON.stringify(hb1.states)}`);
  const stats = frameStats(hb1.frames, start, end);
  t.diagnostic(
    `computing ${stats.duration.toFixed(0)} ms (${done}): ${stats.frames} frames, longest gap ${stats.maxGap.toFixed(0)} ms`,
  );
  assert.ok(stats.frames >= MIN_FRAMES, `≥ ${MIN_FRAMES} frames while computing, got ${stats.frames}`);
  assert.ok(stats.maxGap < MAX_GAP_MS, `longest frame gap < ${MAX_GAP_MS} ms while computing, got ${stats.maxGap.toFixed(0)} ms`);

  // The heartbeat does see a blocked main thread (so a computation on it would fail the test).
  const blocked = await page.evaluate(async () => {
    const t0 = performance.now();
    await new Promise((r) => requestAnimationFrame(r));
    const s = performance.now();
    while (performance.now() - s < 600);
    await new Promise((r) => requestAnimationFrame(r));
    const f = window.__hb.frames.filter((x) => x >= t0);
    let gap = 0;
    for (let i = 1; i < f.length; i++) gap = Math.max(gap, f[i] - f[i - 1]);
    return gap;
  });
  assert.ok(blocked >= 500, `calibration: a 600 ms main-thread block shows as a frame gap (got ${blocked.toFixed(0)} ms)`);

  // 2. Seed 1 starts a computation; in mid-computation seed 2 replaces it.
  const mark = await page.evaluate(() => window.__hb.states.length);
  await setSetting(page, 'settings-seed', 1);
  await page.waitForFunction(() => /Bootstrap|Reading/.test(document.querySelector('[data-testid="progress"]').textContent));
  const changedAt = await page.evaluate(() => {
    const state = document.querySelector('[data-testid="progress"]').getAttribute('data-state');
    return { state, at: performance.now() };
  });
  assert.equal(changedAt.state, 'computing', 'the seed changes while the first job computes');
  await setSetting(page, 'settings-seed', 2);
  await waitReady(page, 180_000);
  const hb2 = await page.evaluate(() => window.__hb);
  const after = hb2.states.slice(mark);
  const readies = after.filter(([s]) => s === 'ready');
  assert.equal(readies.length, 1, `one ready after both changes: ${JSON.stringify(after)}`);
  assert.ok(readies[0][1] > changedAt.at, 'the first job never reported ready');
  assert.ok(!after.some(([s]) => s === 'failed'), 'no failure');
  await page.waitForTimeout(300); // a stale message of the cancelled job would land here
  assert.equal(await page.getByTestId('progress').getAttribute('data-state'), 'ready');
  const report = JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));
  assert.equal(report.settings.seed, 2, 'the report is the second seed’s');
  assert.equal(report.settings.bootstrap, 10_000);
  assert.equal(report.inputs[0].rollouts, 20_304);
  await assertHealthy();
});
