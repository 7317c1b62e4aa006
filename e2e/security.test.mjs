// A locked-down page: the Content-Security-Policy holds for a whole session (no violation
// reports), and data never becomes HTML.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { download, loadExample, openApp, setSetting, tempDir, waitReady } from './lib.mjs';

const EVIL = '<img src=x onerror=alert(1)>';

test('the page carries a CSP and a full session raises no CSP violation', { timeout: 120_000 }, async (t) => {
  const violations = [];
  const { page, assertHealthy } = await openApp(t, {
    beforeGoto: ({ page }) => {
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
    },
  });
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
  await setSetting(page, 'settings-bootstrap', 500);
  await loadExample(page);
  for (const tab of ['curves', 'checkpoints', 'outcomes', 'labels', 'cost', 'compare', 'rollouts', 'table']) {
    await page.getByTestId(`tab-${tab}`).click();
  }
  await download(page, 'export-csv');
  assert.deepEqual(violations, []);
  await assertHealthy();
});

test('task ids, names and error texts are shown as text, never as HTML', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'evil.jsonl');
  const line = (task, ok) => JSON.stringify({
    dataset: `d ${EVIL}`, task_id: `${EVIL} ${task}`, model: EVIL, method: `m ${EVIL}`, success: true,
    steps: [{ tool: EVIL, args: { x: EVIL }, ok, error: ok ? null : EVIL }],
  });
  fs.writeFileSync(file, [line(1, true), line(2, false)].join('\n') + '\n');
  const dialogs = [];
  const { page, assertHealthy } = await openApp(t, {
    beforeGoto: ({ page }) => page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); }),
  });
  await setSetting(page, 'settings-bootstrap', 100);
  await page.getByTestId('file-input').setInputFiles(file);
  await waitReady(page);
  const row = page.locator('[data-testid=main-table] tr[data-method]').first();
  assert.equal(await row.getAttribute('data-model'), EVIL);
  assert.match(await page.getByTestId('main-table').innerText(), /<img src=x onerror=alert\(1\)>/);
  await page.getByTestId('tab-rollouts').click();
  await page.getByTestId('rollout-row').nth(1).click();
  await page.getByTestId('rollout-detail').waitFor();
  assert.match(await page.getByTestId('rollout-detail').innerText(), /<img src=x onerror=alert\(1\)>/);
  await page.getByTestId('tab-curves').click();
  assert.equal(await page.locator('img[src=x]').count(), 0, 'no element was created from data');
  assert.deepEqual(dialogs, []);
  await assertHealthy();
});
