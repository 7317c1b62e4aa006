// Leaderboard review (#11): no failing request on a plain load; no source code in any tab's
// visible text; natural task order in the rollout browser.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadExample, openApp, setSetting } from './lib.mjs';

const TABS = ['table', 'curves', 'checkpoints', 'outcomes', 'labels', 'cost', 'compare', 'rollouts'];

test('a plain app load makes no failing request (no report.json probe)', { timeout: 120_000 }, async (t) => {
  const failed = [];
  const { page, server, assertHealthy } = await openApp(t, {
    beforeGoto: ({ page }) => {
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
    },
  });
  await setSetting(page, 'settings-bootstrap', 200);
  await loadExample(page);
  await page.waitForTimeout(300);
  assert.deepEqual(failed, []);
  assert.ok(!server.requests.some((r) => r.url.includes('report.json')), 'no manifest request');
  await assertHealthy();
});

test('no visible text of any tab contains source code', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', 200);
  await loadExample(page);
  for (const name of TABS) {
    await page.getByTestId(`tab-${name}`).click();
    if (name === 'rollouts') await page.getByTestId('rollout-row').first().waitFor();
    await page.waitForTimeout(200);
    const text = await page.locator('body').innerText();
    for (const bad of ['=>', 'move |', 'on:click', '.update(', '|_|']) {
      assert.ok(!text.includes(bad), `tab ${name} shows ${JSON.stringify(bad)}: …${text.slice(Math.max(0, text.indexOf(bad) - 80), text.indexOf(bad) + 80)}…`);
    }
  }
  // The pager's buttons say Previous / Next and nothing else.
  const labels = await page.locator('.pager button').allInnerTexts();
  assert.deepEqual(labels, ['Previous', 'Next']);
  await assertHealthy();
});
