// Nothing leaves the machine: every request of a full session goes to the page's own origin; and
// the app works from a sub-path (relative URLs only).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { download, loadExample, openApp, readMainTable, setSetting } from './lib.mjs';

const TABS = ['table', 'curves', 'checkpoints', 'outcomes', 'labels', 'cost', 'compare', 'rollouts'];

test('network isolation: every request of a full session is same-origin (or data:/blob:)', { timeout: 120_000 }, async (t) => {
  const urls = [];
  const { page, server, assertHealthy } = await openApp(t, {
    beforeGoto: ({ context, page }) => {
      context.on('request', (r) => urls.push(r.url()));
      context.on('serviceworker', (w) => urls.push(`service worker ${w.url()}`));
      page.on('websocket', (ws) => urls.push(ws.url()));
    },
  });
  await setSetting(page, 'settings-bootstrap', 1000);
  await loadExample(page);
  for (const name of TABS) {
    await page.getByTestId(`tab-${name}`).click();
    if (name === 'curves') {
      await page.getByTestId('pec-plot').first().hover();
      const png = await download(page, page.getByTestId('export-png').first());
      assert.ok(png.bytes.subarray(1, 4).equals(Buffer.from('PNG')), 'the plot saves as a PNG');
    }
    if (name === 'compare') {
      for (const [id, v] of [['compare-dataset', 'bfcl-v3'], ['compare-model', 'GPT-4.1'], ['compare-a', 'Dual-Loop'], ['compare-b', 'ReAct']]) {
        await page.getByTestId(id).locator(`option[value="${v}"]`).waitFor({ state: 'attached' });
        await page.getByTestId(id).selectOption(v);
      }
      await page.getByTestId('compare-table').waitFor();
    }
    if (name === 'rollouts') {
      await page.getByTestId('rollout-row').first().click();
      await page.getByTestId('rollout-detail').waitFor();
    }
  }
  await download(page, 'export-report-json');
  await download(page, 'export-csv');
  await download(page, 'export-latex');
  await page.waitForTimeout(500); // let anything late show up

  const foreign = urls.filter((u) => {
    if (u.startsWith('data:') || u.startsWith('blob:')) return false;
    try {
      return new URL(u).origin !== server.origin;
    } catch {
      return true;
    }
  });
  t.diagnostic(`${urls.length} requests; ${new Set(urls.map((u) => u.split(':')[0])).size} schemes`);
  assert.deepEqual(foreign, [], `requests outside ${server.origin}`);
  // The recording works: the page, the app, the worker and the example were all seen.
  for (const part of ['/index.html', '.wasm', 'worker-loader.js', 'worker_bg.wasm', 'examples/synthetic-grid.jsonl']) {
    const seen = urls.some((u) => u.endsWith(part) || (part === '/index.html' && u === `${server.origin}/`));
    assert.ok(seen, `a request for ${part} was recorded`);
  }
  await assertHealthy();
});

test('the app works under a sub-path (/sub/dir/): loads, computes, requests stay under it', { timeout: 120_000 }, async (t) => {
  const { page, server, assertHealthy } = await openApp(t, { base: '/sub/dir/' });
  assert.ok(page.url().startsWith(`${server.origin}/sub/dir/`));
  await setSetting(page, 'settings-bootstrap', 0);
  await loadExample(page);
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  assert.equal((await readMainTable(page)).length, 36);
  const outside = server.requests
    .map((r) => new URL(r.url, server.origin).pathname)
    .filter((p) => !p.startsWith('/sub/dir/') && p !== '/favicon.ico');
  assert.deepEqual(outside, [], 'requests outside /sub/dir/');
  await assertHealthy();
});
