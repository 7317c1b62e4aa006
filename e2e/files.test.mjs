// Loading files: a file with bad lines (picked, and dropped on the page), and a duplicate pick.

import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';

import {
  cliReport,
  compareTableToReport,
  openApp,
  readMainTable,
  setSetting,
  tempDir,
  waitReady,
} from './lib.mjs';

const B = 1000;

/** A small JSONL: valid rollouts of 2 methods, and three bad lines (1-based line numbers). */
function badLinesFixture() {
  const rollout = (task, method, success, steps) =>
    JSON.stringify({ dataset: 'toy', task_id: task, model: 'm-1', method, success, steps });
  const ok = (tool) => ({ tool, ok: true });
  const fail = (tool, label) => ({ tool, ok: false, error: 'boom', label });
  const lines = [
    rollout('t1', 'ReAct', true, [ok('ls'), ok('cd')]),
    rollout('t1', 'Dual-Loop', false, [ok('ls'), fail('mv', 'precondition'), ok('cd')]),
    '{"dataset": "toy", "task_id": "t2", "model": ', // 3: not JSON
    rollout('t2', 'ReAct', true, [fail('grep', 'schema'), ok('grep')]),
    rollout('t2', 'Dual-Loop', true, [ok('ls'), ok('cat'), ok('cd')]),
    rollout('t3', 'ReAct', false, [ok('ls'), fail('rm', 'state')]),
    rollout('t3', 'Dual-Loop', false, [ok('ls'), { tool: 'rm', ok: false, label: 'oops' }]), // 7: bad label
    rollout('t4', 'ReAct', true, [ok('ls')]),
    rollout('t4', 'Dual-Loop', true, [ok('ls'), fail('cp', 'dependency'), ok('cp')]),
    JSON.stringify({ dataset: 'toy', task_id: 't5', model: 'm-1', method: 'ReAct', steps: [ok('ls')] }), // 10: no success
    rollout('t5', 'Dual-Loop', false, [fail('find', 'information')]),
    rollout('t6', 'ReAct', true, [ok('ls'), ok('cat')]),
    rollout('t6', 'Dual-Loop', true, [ok('ls')]),
  ];
  return { text: lines.join('\n') + '\n', badLines: [3, 7, 10] };
}

/** Error-list entries as [place, message]. */
async function readErrors(page) {
  await page.getByTestId('error-list').waitFor();
  return page.getByTestId('error-item').evaluateAll((items) =>
    items.map((li) => [li.querySelector('code')?.textContent.trim(), li.textContent.trim()]),
  );
}

/** Checks the error list and the main table of a loaded bad-lines file against the CLI. */
async function checkBadLines(t, page, file, badLines) {
  const name = path.basename(file);
  const report = cliReport(file, { bootstrap: B, seed: 0 });
  // The fixture is what it claims to be: the CLI flags exactly these lines.
  assert.deepEqual(
    report.diagnostics.map((d) => `${d.file}:${d.line}`),
    badLines.map((l) => `${name}:${l}`),
    'CLI diagnostics of the fixture',
  );
  const errors = await readErrors(page);
  for (const [, text] of errors) t.diagnostic(text);
  assert.deepEqual(
    errors.map(([place]) => place),
    badLines.map((l) => `${name}:${l}`),
    'each bad line is listed as name:line',
  );
  for (const [i, [, text]] of errors.entries()) {
    assert.ok(text.includes(report.diagnostics[i].message), `error ${i + 1} shows the CLI's message`);
  }
  await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor();
  const rows = await readMainTable(page);
  assert.equal(rows.length, 2, 'two methods');
  compareTableToReport(rows, report);
}

test('bad lines, picked with the file input: listed as name:line; table = CLI', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const { text, badLines } = badLinesFixture();
  const file = path.join(dir, 'bad-lines.jsonl');
  await fs.writeFile(file, text);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await page.getByTestId('file-input').setInputFiles(file);
  await waitReady(page);
  await checkBadLines(t, page, file, badLines);
  await assertHealthy();
});

test('bad lines, dropped on the page: listed as name:line; table = CLI', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const { text, badLines } = badLinesFixture();
  const name = 'dropped-lines.jsonl';
  const file = path.join(dir, name);
  await fs.writeFile(file, text);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  const accepted = await page.evaluate(
    ({ text, name }) => {
      const file = new File([text], name, { type: 'application/x-ndjson' });
      const dataTransfer = new DataTransfer();
      dataTransfer.items.add(file);
      const over = new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer });
      document.dispatchEvent(over);
      const drop = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer });
      document.dispatchEvent(drop);
      return { over: over.defaultPrevented, drop: drop.defaultPrevented };
    },
    { text, name },
  );
  assert.deepEqual(accepted, { over: true, drop: true }, 'the page accepts the drag and the drop');
  await waitReady(page);
  assert.deepEqual(
    await page.getByTestId('file-item').locator('.file-name').allTextContents(),
    [name],
    'the dropped file is listed',
  );
  await checkBadLines(t, page, file, badLines);
  await assertHealthy();
});

test('picking the same file twice: "already loaded" notice, one file-list entry', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const { text } = badLinesFixture();
  const file = path.join(dir, 'twice.jsonl');
  await fs.writeFile(file, text);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  const input = page.getByTestId('file-input');
  await input.setInputFiles(file);
  await waitReady(page);
  await assert.rejects(page.getByTestId('notice').waitFor({ timeout: 500 }), 'no notice after the first pick');
  await input.setInputFiles(file);
  const notice = page.getByTestId('notice');
  await notice.waitFor();
  assert.match(await notice.innerText(), /already loaded/);
  assert.match(await notice.innerText(), /twice\.jsonl/);
  assert.equal(await page.getByTestId('file-item').count(), 1, 'the file is listed once');
  await waitReady(page);
  const report = cliReport(file, { bootstrap: B, seed: 0 });
  compareTableToReport(await readMainTable(page), report); // nothing counted twice
  await assertHealthy();
});

test('a copy of a loaded file under another name is listed but not counted again', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const { text } = badLinesFixture();
  const file = path.join(dir, 'run.jsonl');
  const copy = path.join(dir, 'run (1).jsonl');
  await fs.writeFile(file, text);
  await fs.writeFile(copy, text);
  const { page, assertHealthy } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', B);
  await page.getByTestId('file-input').setInputFiles([file, copy]);
  await waitReady(page);
  assert.equal(await page.getByTestId('file-item').count(), 2, 'both files are listed');
  const repeats = page.getByTestId('file-repeats');
  await repeats.waitFor();
  assert.equal(await repeats.count(), 1);
  assert.match(await repeats.innerText(), /same bytes as run\.jsonl/);
  // The table is that of the file alone: the copy's rollouts (and bad lines) are not counted.
  compareTableToReport(await readMainTable(page), cliReport(file, { bootstrap: B, seed: 0 }));
  await assertHealthy();
});
