// The URL hash keeps the view: the tab on load, and the paired comparison across a reload.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadExample, openApp, setSetting, waitMounted } from './lib.mjs';

const B = 1000;

test('opening #tab=curves selects the curves tab', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t, { hash: 'tab=curves' });
  assert.equal(await page.getByTestId('tab-curves').getAttribute('aria-selected'), 'true');
  assert.equal(await page.getByTestId('tab-table').getAttribute('aria-selected'), 'false');
  assert.match(new URL(page.url()).hash, /^#tab=curves(&|$)/);
  await setSetting(page, 'settings-bootstrap', B);
  await loadExample(page);
  await page.getByTestId('pec-plot').first().waitFor();
  assert.equal(await page.getByTestId('tab-curves').getAttribute('aria-selected'), 'true');
  await assertHealthy();
});

test('compare choices survive a reload (hash), once the data is loaded again', { timeout: 120_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t, { hash: 'tab=compare' });
  assert.equal(await page.getByTestId('tab-compare').getAttribute('aria-selected'), 'true');
  await setSetting(page, 'settings-bootstrap', B);
  await loadExample(page);
  const choice = { 'compare-dataset': 'bfcl-v3', 'compare-model': 'GPT-4.1', 'compare-a': 'Dual-Loop', 'compare-b': 'ReAct' };
  for (const [id, v] of Object.entries(choice)) {
    await page.getByTestId(id).locator(`option[value="${v}"]`).waitFor({ state: 'attached' });
    await page.getByTestId(id).selectOption(v);
  }
  await page.getByTestId('compare-table').waitFor();
  const hash = new URL(page.url()).hash;
  const params = new URLSearchParams(hash.slice(1));
  assert.deepEqual(
    { tab: params.get('tab'), cmp_ds: params.get('cmp_ds'), cmp_model: params.get('cmp_model'), a: params.get('a'), b: params.get('b') },
    { tab: 'compare', cmp_ds: 'bfcl-v3', cmp_model: 'GPT-4.1', a: 'Dual-Loop', b: 'ReAct' },
    `the hash holds the view: ${hash}`,
  );

  const url = page.url();
  await page.reload();
  await waitMounted(page);
  assert.equal(page.url(), url, 'the reload keeps the URL');
  assert.equal(await page.getByTestId('tab-compare').getAttribute('aria-selected'), 'true');
  // The data is not in the URL: load it again.
  await setSetting(page, 'settings-bootstrap', B);
  await loadExample(page);
  await page.getByTestId('compare-table').waitFor();
  for (const [id, v] of Object.entries(choice)) {
    assert.equal(await page.getByTestId(id).inputValue(), v, `${id} keeps ${v}`);
  }
  assert.equal(page.url(), url, 'the URL is unchanged after loading');
  await assertHealthy();
});
