// User label rules in Settings: the page links no regular-expression engine (a size budget,
// bench/size.sh), so the worker compiles the rules and answers; a bad pattern is refused with
// the compiler's reason, good rules are applied and the refusal disappears.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { openApp } from './lib.mjs';

test('label rules are checked by the worker: refused with the reason, then applied', async (t) => {
  const app = await openApp(t);
  const { page } = app;
  await page.locator('details.label-rules > summary').click();
  const box = page.getByTestId('settings-label-rules');
  const apply = page.getByTestId('settings-label-rules-apply');
  const error = page.getByTestId('settings-label-rules-error');

  await box.fill('[{"id": "mine", "label": "state", "error": "quota (", "rationale": "r"}]');
  await apply.click();
  await error.waitFor({ timeout: 30_000 });
  const text = await error.textContent();
  assert.match(text, /^rule "mine": error pattern: found open group without closing '\)'/, text);

  await box.fill('[{"id": "mine", "label": "stat", "rationale": "r"}]');
  await apply.click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="settings-label-rules-error"]')?.textContent.includes('unknown label'),
    null,
    { timeout: 30_000 },
  );

  await box.fill('[{"id": "mine", "label": "state", "error": "quota", "rationale": "r"}]');
  await apply.click();
  await error.waitFor({ state: 'detached', timeout: 30_000 });
  await app.assertHealthy();
});
