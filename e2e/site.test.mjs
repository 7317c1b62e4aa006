// Static report sites: `prefix-exec site` writes a folder that opens straight into the report
// from any sub-path, recomputes it from its data, keeps deep links, and flags tampered data.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';

import {
  DIST, EXAMPLE, cliReport, compareTableToReport, download, ensureCli, launch, loadExample, openApp,
  readMainTable, setSetting, startServer, tempDir,
} from './lib.mjs';

const BOOTSTRAP = 1000;

function buildSite(dir, extra = []) {
  execFileSync(ensureCli(), [
    'site', EXAMPLE, '-o', dir, '--bootstrap', String(BOOTSTRAP), '--app', DIST, '--quiet', ...extra,
    '--title', 'Synthetic <i>grid</i>', '--description', 'First paragraph.\n\nSecond <b>one</b>.',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
}

async function open(t, root, hash = '', { route, before } = {}) {
  const server = await startServer({ root, base: '/pub/report/', route });
  const browser = await launch();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url + hash);
  if (before) await before(page);
  const verify = page.getByTestId('site-verify');
  await page.waitForSelector('[data-testid=site-verify][data-state=match], [data-testid=site-verify][data-state=differ]', { timeout: 60_000 });
  return { page, server, verify };
}

test('a site opens from a sub-path, recomputes the CLI numbers and restores a deep link', { timeout: 180_000 }, async (t) => {
  const dir = path.join(await tempDir(t), 'report');
  buildSite(dir);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  assert.equal(manifest.schema, 'prefix-exec/site/v1');
  assert.equal(manifest.data[0].rollouts, 6768);
  assert.ok(!fs.existsSync(path.join(dir, 'examples')), 'the bundled example is not copied');

  const hash = '#tab=compare&cmp_ds=bfcl-v3&cmp_model=GPT-4.1&a=Dual-Loop&b=ReAct';
  const { page, server, verify } = await open(t, dir, hash);
  assert.equal(await verify.getAttribute('data-state'), 'match');
  assert.equal(await page.getByTestId('integrity-warning').count(), 0);
  // Data never becomes HTML.
  assert.equal(await page.getByTestId('site-title').innerText(), 'Synthetic <i>grid</i>');
  assert.match(await page.getByTestId('site-header').innerText(), /Second <b>one<\/b>\./);
  // The deep link restored the comparison.
  assert.equal(await page.getByTestId('tab-compare').getAttribute('aria-selected'), 'true');
  for (const [id, v] of [['compare-dataset', 'bfcl-v3'], ['compare-model', 'GPT-4.1'], ['compare-a', 'Dual-Loop'], ['compare-b', 'ReAct']]) {
    assert.equal(await page.getByTestId(id).inputValue(), v, id);
  }
  await page.getByTestId('compare-table').waitFor();
  // The table equals the CLI's report for the site's data.
  await page.getByTestId('tab-table').click();
  const rows = await readMainTable(page);
  const cells = compareTableToReport(rows, cliReport(path.join(dir, 'data', 'rollouts.jsonl'), { bootstrap: BOOTSTRAP }));
  assert.equal(cells, 36 * 6);
  // Every request stayed on the site's origin, under its sub-path.
  for (const r of server.requests) assert.ok(r.url.startsWith('/pub/report/'), r.url);
});

test('a tampered data file gives a visible warning, never silently different numbers', { timeout: 180_000 }, async (t) => {
  const dir = path.join(await tempDir(t), 'report');
  buildSite(dir);
  const data = path.join(dir, 'data', 'rollouts.jsonl');
  const lines = fs.readFileSync(data, 'utf8').split('\n');
  fs.writeFileSync(data, lines.slice(0, 6000).join('\n') + '\n'); // truncated
  const { page, verify } = await open(t, dir);
  assert.equal(await verify.getAttribute('data-state'), 'differ');
  const warning = page.getByTestId('integrity-warning');
  // The check follows the reading: its warning may come just after the numbers.
  await warning.first().waitFor({ timeout: 30_000 });
  assert.equal(await warning.count(), 1);
  assert.match(await warning.innerText(), /rollouts\.jsonl: the file differs from the one published/);
});

test('gzip-compressed site data is read while it downloads, checked, and gives the same numbers; a damaged one is flagged', { timeout: 240_000 }, async (t) => {
  const dir = path.join(await tempDir(t), 'report');
  buildSite(dir, ['--gzip']);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  assert.equal(manifest.data[0].path, 'data/rollouts.jsonl.gz');
  assert.ok(manifest.data[0].bytes < 1_000_000, `compressed to ${manifest.data[0].bytes} bytes`);
  const gz = path.join(dir, 'data', 'rollouts.jsonl.gz');
  // The server keeps the data's last 8 KB back until the page has read from the rest (the
  // app holds the last MiB its decoder gave until the stream ends well: the rest is 3 MB).
  let release;
  const released = new Promise((r) => (release = r));
  let sentAll = false;
  const route = async (req, res, pathname) => {
    if (!pathname.endsWith('/data/rollouts.jsonl.gz')) return false;
    const body = fs.readFileSync(gz);
    res.writeHead(200, { 'Content-Type': 'application/gzip', 'Content-Length': body.length, 'Cache-Control': 'no-store' });
    const cut = body.length - 8192;
    res.write(body.subarray(0, cut));
    await released;
    sentAll = true;
    res.end(body.subarray(cut));
    return true;
  };
  const before = async (page) => {
    let seen = '';
    for (let i = 0; i < 600 && !/ [1-9][\d.]* MB decompressed/.test(seen); i++) {
      seen = await page.evaluate(() => document.querySelector('[data-testid="progress"]')?.textContent ?? '');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(seen, /Reading rollouts\.jsonl: [\d.]+ of [\d.]+ MB read, [1-9][\d.]* MB decompressed/, 'read while the body downloads');
    assert.equal(sentAll, false);
    release();
  };
  const { page, verify } = await open(t, dir, '', { route, before });
  assert.equal(await verify.getAttribute('data-state'), 'match');
  assert.equal(await page.getByTestId('integrity-warning').count(), 0);
  const rows = await readMainTable(page);
  const plain = path.join(await tempDir(t), 'rollouts.jsonl');
  fs.writeFileSync(plain, zlib.gunzipSync(fs.readFileSync(gz)));
  assert.equal(compareTableToReport(rows, cliReport(plain, { bootstrap: BOOTSTRAP })), 36 * 6);
  await page.close();

  // One byte changed inside the compressed data: the gzip check fails, and the site says so.
  const bytes = fs.readFileSync(gz);
  bytes[bytes.length >> 1] ^= 0xff;
  fs.writeFileSync(gz, bytes);
  const server = await startServer({ root: dir, base: '/pub/report/' });
  t.after(() => server.close());
  const browser = await launch();
  t.after(() => browser.close());
  const damaged = browser.context.pages()[0] ?? (await browser.context.newPage());
  await damaged.goto(server.url);
  const warning = damaged.getByTestId('integrity-warning');
  await warning.first().waitFor({ timeout: 60_000 });
  const texts = await warning.allInnerTexts();
  assert.ok(texts.some((w) => /data\/rollouts\.jsonl\.gz: /.test(w)), texts.join('\n'));
});

test('"Download this report" builds the same kind of site in the browser, as a zip', { timeout: 180_000 }, async (t) => {
  const { page } = await openApp(t);
  await setSetting(page, 'settings-bootstrap', BOOTSTRAP);
  await loadExample(page);
  await page.getByTestId('site-title-input').fill('Built in the browser');
  await page.getByTestId('site-title-input').dispatchEvent('change');
  const zip = await download(page, 'export-site');
  assert.equal(zip.name, 'prefix-exec-site.zip');
  const dir = path.join(await tempDir(t), 'report');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, '..', 'site.zip'), zip.bytes);
  execFileSync('python3', ['-m', 'zipfile', '-e', path.join(dir, '..', 'site.zip'), dir]);
  for (const f of ['index.html', 'report.json', 'worker-loader.js', 'worker.js', 'worker_bg.wasm', 'data/rollouts.jsonl']) {
    assert.ok(fs.existsSync(path.join(dir, f)), `${f} is in the zip`);
  }
  const { page: sitePage, verify } = await open(t, dir);
  assert.equal(await verify.getAttribute('data-state'), 'match');
  assert.equal(await sitePage.getByTestId('site-title').innerText(), 'Built in the browser');
  const rows = await readMainTable(sitePage);
  const cells = compareTableToReport(rows, cliReport(path.join(dir, 'data', 'rollouts.jsonl'), { bootstrap: BOOTSTRAP }));
  assert.equal(cells, 36 * 6);
});
