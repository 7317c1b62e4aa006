// A whole results repository (#27) and archives of it (#28), in the browser: the fixture in
// tests/fixtures/repo (a `<repo>-<commit>/` top folder, one ToolSandbox model's two runs, BFCL
// single-turn files and a result without its score file, a tau2 run named by a Hugging Face
// cache path, code and notebooks) picked as one folder, then dropped as a .tar.gz and a .zip:
// the CLI's conditions and numbers, runs apart until "Merge runs" is on, readable names, one
// note per kind of thing skipped, problems by kind.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';

import { ROOT, cliReportBytes, computeAfter, download, openApp, setSetting, tempDir, waitMounted } from './lib.mjs';

const FIXTURES = path.join(ROOT, 'tests', 'fixtures');
const TOP = 'agent_hard_benchmark-face722e';

// `n` canonical lines of dataset `big`, each distinct (hashes in its arguments, errors and
// outcomes), so that nothing compresses them away: a member bigger than a read.
function bigLines(n) {
  const hex = (i, k) => createHash('sha256').update(`${k}:${i}`).digest('hex');
  const lines = [];
  for (let i = 0; i < n; i++) {
    const h = hex(i, 'x');
    lines.push(JSON.stringify({ dataset: 'big', task_id: `t${i}`, model: 'm', method: i % 2 ? 'a' : 'b', success: h[0] < '8', steps: [{ tool: 'q', args: { x: h + hex(i, 'y') }, ok: h[1] < 'c', error: hex(i, 'e') }] }));
  }
  return lines.join('\n') + '\n';
}

async function report(page) {
  return JSON.parse((await download(page, 'export-report-json')).bytes.toString('utf8'));
}

test('a results repository picked as one folder reads right, = CLI', { timeout: 300_000 }, async (t) => {
  const { page, assertHealthy } = await openApp(t);
  await page.setViewportSize({ width: 1280, height: 800 });
  await setSetting(page, 'settings-bootstrap', 200);
  await computeAfter(page, () => page.getByTestId('folder-input').setInputFiles(path.join(FIXTURES, 'repo', TOP)));
  const r = await report(page);
  const rows = r.conditions.map((c) => `${c.dataset} | ${c.model} | ${c.method} | ${c.n}`);
  assert.deepEqual(rows, [
    'bfcl/multi_turn_base | tiny-model-FC | fc | 5',
    'tau2/telecom | Qwen/Qwen3-32B | llm_agent | 5',
    'toolsandbox | acme/tiny-1 | default (run 2025-01-02 03:04:05) | 7',
    'toolsandbox | acme/tiny-1 | default (run 2025-01-02 23:04:05) | 7',
  ]);
  const cli = JSON.parse(cliReportBytes([TOP], { cwd: path.join(FIXTURES, 'repo'), bootstrap: 200, seed: 0 }).toString('utf8'));
  assert.deepEqual(r.conditions, cli.conditions);
  assert.deepEqual(r.paired, cli.paired);
  assert.deepEqual(r.notes, cli.notes);

  // The notes: the runs kept apart, the single-turn files skipped.
  const notes = await page.getByTestId('report-note').allInnerTexts();
  assert.ok(notes.some((n) => /acme\/tiny-1 · default came from 2 runs/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /BFCL single-turn categories skipped \(irrelevance, simple/.test(n)), notes.join('\n'));
  // Problems by kind: the missing score file named once.
  const items = await page.getByTestId('error-item').allTextContents();
  assert.ok(items.some((i) => /other-model\/BFCL_v3_multi_turn_base_result\.json.*needs its score file/.test(i)), items.join('\n'));
  assert.equal(await page.getByTestId('error-kind').count() > 0, true, 'a kind with several problems folds them');
  // The cache path is on hover only; the table shows the model it names.
  const table = await page.getByTestId('main-table').innerText();
  assert.ok(table.includes('Qwen/Qwen3-32B') && !table.includes('.cache'), table);

  // Merge runs: the two runs become trials of one condition.
  await computeAfter(page, () => page.getByTestId('settings-merge-runs').check());
  const merged = await report(page);
  const sandbox = merged.conditions.filter((c) => c.dataset === 'toolsandbox').map((c) => [c.method, c.n]);
  assert.deepEqual(sandbox, [['default', 14]]);
  const cliMerged = JSON.parse(
    cliReportBytes([TOP], { cwd: path.join(FIXTURES, 'repo'), bootstrap: 200, seed: 0, extra: ['--merge-runs'] }).toString('utf8'),
  );
  assert.deepEqual(merged.conditions, cliMerged.conditions);
  await assertHealthy();
});

test('the repository as a .tar.gz and a .zip: the folder\'s report', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir(t);
  const tgz = path.join(dir, 'repo.tar.gz');
  execFileSync('tar', ['-czf', tgz, '-C', path.join(FIXTURES, 'repo'), TOP]);
  const zip = path.join(dir, 'repo.zip');
  execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2], sys.argv[3])', zip.slice(0, -4), path.join(FIXTURES, 'repo'), TOP]);
  const folder = JSON.parse(cliReportBytes([TOP], { cwd: path.join(FIXTURES, 'repo'), bootstrap: 200, seed: 0 }).toString('utf8'));
  const { page, assertHealthy } = await openApp(t);
  for (const file of [tgz, zip]) {
    // Each archive on its own page (the files of a page are kept in memory only).
    await page.reload();
    await waitMounted(page);
    await setSetting(page, 'settings-bootstrap', 200);
    await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(file));
    const r = await report(page);
    assert.deepEqual(r.conditions, folder.conditions, path.basename(file));
    assert.deepEqual(r.paired, folder.paired, path.basename(file));
    const cli = JSON.parse(cliReportBytes([path.basename(file)], { cwd: dir, bootstrap: 200, seed: 0 }).toString('utf8'));
    assert.deepEqual(r.notes, cli.notes, path.basename(file));
    assert.ok(r.notes.some((n) => n.includes('5 members that are not run data')), r.notes.join('\n'));
    // The file list shows the archive as one entry with its members' rollouts.
    const item = page.getByTestId('file-item').first();
    assert.match(await item.innerText(), /repo\.(tar\.gz|zip)/);
    // A rollout read from the archive opens at its steps (its member found again in it).
    await page.getByTestId('tab-rollouts').click();
    await page.getByTestId('rollout-condition').locator('option').first().waitFor({ state: 'attached' });
    await page.getByTestId('rollout-condition').selectOption('toolsandbox\u001facme/tiny-1\u001fdefault (run 2025-01-02 03:04:05)');
    await page.getByTestId('rollout-search').fill('wifi_on_parallel');
    await page.getByTestId('rollout-row').first().click();
    const steps = page.getByTestId('rollout-detail').getByTestId('step');
    await steps.first().waitFor();
    assert.equal(await steps.count(), 4, path.basename(file));
    assert.match(await steps.first().innerText(), /set_wifi_status/);
    await page.getByTestId('tab-table').click().catch(() => {});
  }
  await assertHealthy();
});

// `?data=URL` naming an archive (#28), fetched by the scoring worker. A gzip body of known
// length is read as it downloads: the server sends the first half of a .tar.gz and holds the rest
// until the page shows members read. Its bytes come back as a File, which the rollout viewer and
// a recomputation read (no second download). A zip (its table of contents is at its end) and a
// body sent without its length are downloaded first, then read. Multi-member gzip (which
// Chromium's decoder refuses) and a cut body are read on from the downloaded File by the wasm
// decoder. A plain JSONL is downloaded, then read. A change of settings during a download waits
// for it (no second download). With one worker (no pool) the scoring worker's own decoder reads
// the body. Every report is the CLI's on the same bytes.
test('?data= links: a .tar.gz read while it downloads, zip, no length, damaged: the CLI\'s report', { timeout: 400_000 }, async (t) => {
  const dir = await tempDir(t);
  const src = path.join(dir, 'src');
  fs.cpSync(path.join(FIXTURES, 'repo', TOP), path.join(src, TOP), { recursive: true });
  // A big member of distinct lines, last in the archive: the repository's files come before it.
  const entries = fs.readdirSync(path.join(src, TOP)).sort().map((e) => `${TOP}/${e}`);
  fs.mkdirSync(path.join(src, 'zz', TOP, 'big'), { recursive: true });
  fs.writeFileSync(path.join(src, 'zz', TOP, 'big', 'lines.jsonl'), bigLines(20_000));
  const tar = path.join(dir, 'repo.tar');
  execFileSync('tar', ['-cf', tar, '-C', src, ...entries]);
  execFileSync('tar', ['-rf', tar, '-C', path.join(src, 'zz'), `${TOP}/big`]);
  const tarBytes = fs.readFileSync(tar);
  const gz = (b) => zlib.gzipSync(b, { level: 1 });
  const whole = gz(tarBytes);
  const zip = path.join(dir, 'repo.zip');
  execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2], sys.argv[3])', zip.slice(0, -4), path.join(FIXTURES, 'repo'), TOP]);
  const bodies = {
    'repo.tar.gz': whole,
    'unsized.tar.gz': whole,
    'repo.zip': fs.readFileSync(zip),
    'two.tar.gz': Buffer.concat([gz(tarBytes.subarray(0, tarBytes.length >> 1)), gz(tarBytes.subarray(tarBytes.length >> 1))]),
    'cut.tar.gz': whole.subarray(0, Math.floor(whole.length * 0.6)),
    'small.jsonl': fs.readFileSync(path.join(ROOT, 'tests', 'golden', 'small.jsonl')),
  };
  for (const [name, body] of Object.entries(bodies)) fs.writeFileSync(path.join(dir, name), body);
  // The server: `hold` keeps the second half of one body back until released.
  const served = [];
  let hold = null;
  const route = async (req, res, pathname) => {
    const m = pathname.match(/\/runs\/([^/]+)$/);
    if (!m) return false;
    const body = bodies[m[1]];
    if (!body) {
      res.writeHead(404);
      res.end();
      return true;
    }
    served.push(m[1]);
    const headers = { 'Content-Type': 'application/octet-stream', 'Cache-Control': 'no-store' };
    if (m[1] !== 'unsized.tar.gz') headers['Content-Length'] = body.length;
    res.writeHead(200, headers);
    if (hold?.name === m[1]) {
      const half = body.length >> 1;
      res.write(body.subarray(0, half));
      await hold.released;
      hold.sentAll = true;
      res.end(body.subarray(half));
    } else {
      res.end(body);
    }
    return true;
  };
  const check = async (page, url, name) => {
    const progress = () => page.evaluate(() => document.querySelector('[data-testid="progress"]')?.textContent ?? '');
    let release;
    hold = ['repo.tar.gz', 'repo.zip'].includes(name) ? { name, released: new Promise((r) => (release = r)), sentAll: false } : null;
    served.length = 0;
    await page.goto(`${url}?data=runs/${name}`);
    await waitMounted(page);
    if (hold?.name === 'repo.zip') {
      // A zip is downloaded first (its table of contents is at its end), and says so.
      let seen = '';
      for (let i = 0; i < 600 && !/Downloading repo\.zip: [\d.]+ of [\d.]+ MB/.test(seen); i++) {
        seen = await progress();
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(seen, /Downloading repo\.zip: [\d.]+ of [\d.]+ MB/, 'the download is shown');
      release();
    } else if (hold) {
      // Members are read while half the body is still on the server.
      let seen = '';
      for (let i = 0; i < 600; i++) {
        seen = await progress();
        const m = seen.match(/([\d,]+) members/);
        if (m && Number(m[1].replace(/,/g, '')) > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(seen, /Reading repo\.tar\.gz: [1-9][\d,]* members/, 'members read during the download');
      assert.equal(hold.sentAll, false);
      // A change of settings meanwhile waits for the download rather than starting it over.
      await setSetting(page, 'settings-bootstrap', 200);
      await page.getByTestId('notice').filter({ hasText: 'once the linked data has downloaded' }).waitFor({ timeout: 30_000 });
      release();
    }
    await page.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, { timeout: 200_000 });
    await setSetting(page, 'settings-bootstrap', 200);
    await page.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, { timeout: 200_000 });
    const r = await report(page);
    const cli = JSON.parse(cliReportBytes([name], { cwd: dir, bootstrap: 200, seed: 0 }).toString('utf8'));
    for (const key of ['conditions', 'paired', 'diagnostics', 'diagnostics_total', 'problems', 'checks', 'inputs', 'notes']) {
      assert.deepEqual(r[key], cli[key], `${name}: ${key}`);
    }
    assert.ok(r.conditions.length > 0, name);
    if (name.endsWith('.tar.gz') && !name.startsWith('cut')) assert.ok(r.conditions.some((c) => c.dataset === 'big'), name);
    if (!name.startsWith('cut') && !name.endsWith('.jsonl')) {
      // A rollout read back from the downloaded File opens at its steps.
      assert.ok(r.conditions.some((c) => c.model === 'acme/tiny-1'), name);
      await page.getByTestId('tab-rollouts').click();
      await page.getByTestId('rollout-condition').locator('option').first().waitFor({ state: 'attached' });
      await page.getByTestId('rollout-condition').selectOption('toolsandbox\u001facme/tiny-1\u001fdefault (run 2025-01-02 03:04:05)');
      await page.getByTestId('rollout-search').fill('wifi_on_parallel');
      await page.getByTestId('rollout-row').first().click();
      const steps = page.getByTestId('rollout-detail').getByTestId('step');
      await steps.first().waitFor();
      assert.match(await steps.first().innerText(), /set_wifi_status/, name);
      await page.getByTestId('tab-table').click();
    }
    // Downloaded once: the recomputation and the viewer read the File.
    assert.deepEqual(served, [name], name);
  };
  const { page, url, assertHealthy } = await openApp(t, { route });
  for (const name of Object.keys(bodies)) await check(page, url, name);
  // One worker (no pool): the scoring worker's own decoder reads the body as it comes.
  const alone = await openApp(t, { route, beforeGoto: ({ page }) => page.addInitScript(() => Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => 1 })) });
  for (const name of ['repo.tar.gz', 'two.tar.gz']) await check(alone.page, alone.url, name);
  assert.equal(await alone.page.evaluate(() => navigator.hardwareConcurrency), 1);
  await alone.assertHealthy();
  // A link that fails is said, and the page stays usable.
  await page.goto(`${url}?data=runs/missing.tar.gz`);
  await waitMounted(page);
  await page.getByTestId('notice').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('notice').innerText(), /could not load .*missing\.tar\.gz: HTTP 404/);
  await assertHealthy();
});

// The File System Access API pick (#28): headless Chromium cannot drive the picker, so an init
// script makes `showDirectoryPicker` return a directory of the origin private file system
// holding the fixture; the folder is walked through its handle and reads as the CLI reads it.
// A closed picker (AbortError) changes nothing.
test('a folder picked through showDirectoryPicker (OPFS in its place): the CLI\'s report', { timeout: 300_000 }, async (t) => {
  const root = path.join(FIXTURES, 'repo', TOP);
  const files = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else files.push([r, fs.readFileSync(path.join(root, r)).toString('base64')]);
    }
  };
  walk('');
  const { page, assertHealthy } = await openApp(t, {
    beforeGoto: ({ page }) =>
      page.addInitScript((name) => {
        window.showDirectoryPicker = async () => {
          if (window.__pickerClosed) throw new DOMException('The user aborted a request.', 'AbortError');
          return (await navigator.storage.getDirectory()).getDirectoryHandle(name);
        };
      }, TOP),
  });
  await page.evaluate(
    async ({ name, files }) => {
      let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(name, { create: true });
      const top = dir;
      for (const [rel, b64] of files) {
        dir = top;
        const parts = rel.split('/');
        const leaf = parts.pop();
        for (const p of parts) dir = await dir.getDirectoryHandle(p, { create: true });
        const w = await (await dir.getFileHandle(leaf, { create: true })).createWritable();
        await w.write(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
        await w.close();
      }
    },
    { name: TOP, files },
  );
  await setSetting(page, 'settings-bootstrap', 200);
  // Closed without a choice: no files, no notice.
  await page.evaluate(() => (window.__pickerClosed = true));
  await page.getByTestId('folder-button').click();
  await page.waitForTimeout(300);
  assert.equal(await page.locator('[data-testid="file-list"] > li').count(), 0);
  assert.equal(await page.getByTestId('notice').count(), 0);
  await page.evaluate(() => (window.__pickerClosed = false));
  await computeAfter(page, () => page.getByTestId('folder-button').click());
  const r = await report(page);
  const cli = JSON.parse(cliReportBytes([TOP], { cwd: path.join(FIXTURES, 'repo'), bootstrap: 200, seed: 0 }).toString('utf8'));
  assert.deepEqual(r.conditions, cli.conditions);
  assert.deepEqual(r.paired, cli.paired);
  assert.deepEqual(r.notes, cli.notes);
  assert.deepEqual(r.inputs.map((i) => i.file), cli.inputs.map((i) => i.file), 'the same files, named as the CLI names them, in its order');
  assert.match(await page.getByTestId('notice').innerText(), /not \.json/i);
  await assertHealthy();
});

// Counts, in every worker, the archive members a pool worker prepared (their format and reading,
// `ingest::whole::prepare_encoded`) and sent back: with zip members as they are inflated, and by
// batch for a tar stream's members (`web::pool::whole`). Returns a function that sums them.
async function countPrepared(page) {
  for (const w of page.workers()) {
    await w.evaluate(() => {
      if (self.preparedCount !== undefined) return;
      self.preparedCount = 0;
      const post = self.postMessage;
      self.postMessage = function (m, transfer) {
        const msg = typeof m?.msg === 'string' ? JSON.parse(m.msg) : null;
        // Externally tagged (`web::protocol`): {"pool_inflated": {…}}.
        const count = (lens) => lens.filter((l) => l !== null).length;
        if (msg?.pool_whole_prepared) self.preparedCount += count(msg.pool_whole_prepared.lens);
        if (msg?.pool_inflated) self.preparedCount += count(msg.pool_inflated.prepared_lens);
        return post.call(self, m, transfer);
      };
    });
  }
  return async () => (await Promise.all(page.workers().map((w) => w.evaluate(() => self.preparedCount ?? 0)))).reduce((a, b) => a + b, 0);
}

// A zip and a .tar.gz bigger than one read (4 MiB): the zip's members are inflated and prepared by
// the pool workers, the tar stream's decompressed by one of them (the wasm decoder, its megabyte
// chunks sent in buffers the scoring worker sends back with its credit) and its members prepared
// by the pool in batches; the scoring worker pushes them in order. The report is the CLI's on the
// folder they hold.
test('a big zip and .tar.gz of released runs, read by the pool: the folder\'s report', { timeout: 600_000 }, async (t) => {
  const shared = path.join(ROOT, '..', 'shared', 'data', 'released-runs');
  if (!fs.existsSync(path.join(shared, 'toolsandbox'))) return t.skip('../shared/data/released-runs is not here');
  const dir = await tempDir(t);
  const folder = JSON.parse(cliReportBytes(['toolsandbox'], { cwd: shared, bootstrap: 200, seed: 0 }).toString('utf8'));
  const { page, assertHealthy } = await openApp(t);
  for (const [kind, format] of [['zip', 'zip'], ['tar.gz', 'gztar']]) {
    const archive = path.join(dir, `toolsandbox.${kind}`);
    execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4])', path.join(dir, 'toolsandbox'), format, shared, 'toolsandbox']);
    assert.ok(fs.statSync(archive).size > 4 * 1024 * 1024, 'more than one read, so the pool reads it');
    await page.reload();
    await waitMounted(page);
    await setSetting(page, 'settings-bootstrap', 200);
    await setSetting(page, 'settings-workers', 2);
    for (let i = 0; i < 200 && page.workers().length !== 3; i++) await new Promise((r) => setTimeout(r, 50));
    const prepared = await countPrepared(page);
    await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(archive), 300_000);
    const r = await report(page);
    // The pool prepared the ToolSandbox files (thousands of them), the scoring worker read them on.
    const n = await prepared();
    assert.ok(n > 1000, `${kind}: ${n} members prepared by the pool`);
    assert.ok(r.conditions.length >= 4, JSON.stringify(r.conditions.map((c) => c.model)));
    assert.deepEqual(r.conditions, folder.conditions, kind);
    assert.deepEqual(r.paired, folder.paired, kind);
    assert.deepEqual(r.ranks, folder.ranks, kind);
  }
  await assertHealthy();
});

// A dropped gzip decompressed by a pool worker's wasm decoder (faster there than the browser's),
// or with the pool off by the browser's own DecompressionStream, with the wasm decoder taking
// over where it fails (Chromium refuses a gzip of several members as "junk after the end", and
// a cut stream) (#28): every stream reads as the CLI reads it, whichever decoder and worker.
test('a dropped gzip decompressed by the pool\'s wasm decoder or the browser\'s: the CLI\'s report, damaged streams too', { timeout: 400_000 }, async (t) => {
  const dir = await tempDir(t);
  const src = path.join(dir, 'src');
  fs.cpSync(path.join(FIXTURES, 'repo', TOP), path.join(src, TOP), { recursive: true });
  // A big member of distinct lines: the archive passes the 4 MiB of a small file, and the
  // browser's decoder hands bytes over before a damaged stream fails.
  fs.mkdirSync(path.join(src, TOP, 'big'));
  fs.writeFileSync(path.join(src, TOP, 'big', 'lines.jsonl'), bigLines(60_000));
  const tar = path.join(dir, 'repo.tar');
  execFileSync('tar', ['-cf', tar, '-C', src, TOP]);
  const tarBytes = fs.readFileSync(tar);
  const gz = (b) => zlib.gzipSync(b, { level: 1 });
  const whole = gz(tarBytes);
  const small = fs.readFileSync(path.join(ROOT, 'tests', 'golden', 'small.jsonl'));
  const cases = {
    'repo.tar.gz': whole,
    'two.tar.gz': Buffer.concat([gz(tarBytes.subarray(0, tarBytes.length >> 1)), gz(tarBytes.subarray(tarBytes.length >> 1))]),
    'cut.tar.gz': whole.subarray(0, Math.floor(whole.length * 0.6)),
    'small.jsonl.gz': gz(small),
    'junk.jsonl.gz': Buffer.concat([gz(small), Buffer.from('junk')]),
  };
  assert.ok(whole.length > 4 << 20, `the archive is ${whole.length} bytes`);
  const { page, assertHealthy } = await openApp(t);
  const runs = [
    ...Object.keys(cases).map((name) => [name, 'browser', 2]),
    ['repo.tar.gz', 'browser', 1],
    ['two.tar.gz', 'browser', 1],
    ['two.tar.gz', 'wasm', 2],
    ['cut.tar.gz', 'wasm', 2],
  ];
  for (const [name, mode, workers] of runs) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, cases[name]);
    await page.reload();
    await waitMounted(page);
    await setSetting(page, 'settings-bootstrap', 200);
    await setSetting(page, 'settings-workers', workers);
    // The page starts the pool when the setting changes: every worker (the scoring worker and
    // the pool's) gets DecompressionStream wrapped to count its uses, or removed.
    const expected = workers >= 2 ? workers + 1 : 1;
    for (let i = 0; i < 200 && page.workers().length !== expected; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(page.workers().length, expected, 'the scoring worker and the pool');
    for (const w of page.workers()) {
      await w.evaluate((keep) => {
        const D = self.DecompressionStream;
        self.uses = 0;
        self.DecompressionStream = keep && D ? class extends D { constructor(f) { super(f); self.uses += 1; } } : undefined;
        // A pool worker reads the dropped file itself only to decode it.
        self.reads = 0;
        const R = self.FileReaderSync?.prototype;
        if (R && !R.counted) {
          const read = R.readAsArrayBuffer;
          R.readAsArrayBuffer = function (...a) { self.reads += 1; return read.apply(this, a); };
          R.counted = true;
        }
      }, mode === 'browser');
    }
    const prepared = await countPrepared(page);
    await computeAfter(page, () => page.getByTestId('file-input').setInputFiles(file));
    // With a pool, the tar stream's ToolSandbox members were prepared by it.
    if (name === 'repo.tar.gz' && workers >= 2) assert.ok((await prepared()) > 0, `${name}: ${await prepared()} members prepared by the pool`);
    const each = await Promise.all(page.workers().map((w) => w.evaluate(() => self.uses ?? 0)));
    const uses = each.reduce((a, b) => a + b, 0);
    // The browser's decoder with the pool off; with a pool, a pool worker's wasm decoder.
    const browserDecodes = mode === 'browser' && workers < 2;
    assert.equal(uses, browserDecodes ? 1 : 0, `${name}: DecompressionStream used ${uses} times`);
    if (mode === 'browser' && workers >= 2) {
      const reads = await Promise.all(page.workers().map((w) => w.evaluate(() => self.reads ?? 0)));
      assert.ok(reads.slice(1).some((n) => n > 0), `${name}: no pool worker read the file (${reads})`);
    }
    const r = await report(page);
    const cli = JSON.parse(cliReportBytes([name], { cwd: dir, bootstrap: 200, seed: 0 }).toString('utf8'));
    for (const key of ['conditions', 'paired', 'diagnostics', 'diagnostics_total', 'problems', 'checks', 'inputs', 'notes']) {
      assert.deepEqual(r[key], cli[key], `${name} (${mode}, ${workers} workers): ${key}`);
    }
    if (name.startsWith('cut')) assert.ok(cli.diagnostics.some((d) => /cut short|was cut/.test(d.message)), JSON.stringify(cli.diagnostics));
    if (name.endsWith('.tar.gz') && !name.startsWith('cut')) {
      assert.ok(cli.conditions.some((c) => c.dataset === 'big'), name);
    }
  }
  await assertHealthy();
});
