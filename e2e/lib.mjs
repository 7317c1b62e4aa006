// Shared helpers of the end-to-end tests (node --test e2e/) and of bench/browser.mjs.
//
// - startServer(): a tiny static server for dist/ (Node's http module, 127.0.0.1, random port),
//   optionally under a sub-path such as /sub/dir/;
// - launch() / openApp(): Debian's Chromium through playwright-core, one fresh profile each;
// - UI helpers keyed on the app's data-testid hooks (settings, waiting for a computation,
//   downloads, reading the main table);
// - the native CLI (built if missing) and its report for a file, cached under e2e/.cache/;
// - the 3-copy synthetic grid used by the responsiveness test, cached under e2e/.cache/.
//
// Environment overrides: E2E_DIST (directory served, default dist/), PREFIX_EXEC_CLI (the CLI
// binary, default target/debug/prefix-exec), CHROMIUM (default /usr/bin/chromium).

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.resolve(process.env.E2E_DIST ?? path.join(ROOT, 'dist'));
export const CACHE = path.join(ROOT, 'e2e', '.cache');
export const EXAMPLE = path.join(ROOT, 'static', 'examples', 'synthetic-grid.jsonl');
export const EXAMPLE_NAME = 'synthetic-grid.jsonl';
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** The main table's columns (data-col), in display order. */
export const COLUMNS = ['ter', 'mean_fed', 'auc_pec', 'rr_eligible', 'rr', 'final_success'];
/** Columns holding an estimate (all but the RR-Eligible count). */
export const SCORE_COLUMNS = COLUMNS.filter((c) => c !== 'rr_eligible');

// ------------------------------------------------------------------------------------------
// Static server
// ------------------------------------------------------------------------------------------

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.jsonl': 'application/x-ndjson',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Serves `root` (default dist/) on 127.0.0.1 at a free port, under `base` (default "/"; e.g.
 * "/sub/dir/"). A directory serves its index.html; "/sub/dir" redirects to "/sub/dir/"; paths
 * outside `base` or `root` are 404. Every request is logged in `requests`. `route(req, res,
 * pathname)`, if given, answers first: it returns true where it answered.
 * Returns { origin, url (origin + base), requests, close() }.
 */
export async function startServer({ root = DIST, base = '/', route } = {}) {
  if (!base.startsWith('/') || !base.endsWith('/')) throw new Error(`base must be /…/, got ${base}`);
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    throw new Error(
      `${root}/index.html is missing: build the app first ` +
        '(PATH=$PWD/node_modules/.bin:$PATH TRUNK_SKIP_VERSION_CHECK=true trunk build --release)',
    );
  }
  const requests = [];
  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method, url: req.url });
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'Cache-Control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      return send(400, 'bad request');
    }
    // A test's own answers first (a body sent slowly, or without its length).
    if (route && (await route(req, res, pathname))) return;
    if (pathname === base.slice(0, -1) && base !== '/') {
      return send(301, '', { Location: base });
    }
    if (!pathname.startsWith(base)) return send(404, 'not found');
    let file = path.resolve(root, '.' + path.posix.normalize('/' + pathname.slice(base.length)));
    if (file !== root && !file.startsWith(root + path.sep)) return send(404, 'not found');
    try {
      let stat = await fsp.stat(file);
      if (stat.isDirectory()) {
        file = path.join(file, 'index.html');
        stat = await fsp.stat(file);
      }
      const type = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
      res.writeHead(200, {
        'Content-Type': type,
        'Content-Length': stat.size,
        'Cache-Control': 'no-store',
      });
      if (req.method === 'HEAD') return res.end();
      fs.createReadStream(file).pipe(res);
    } catch {
      send(404, 'not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: origin + base,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

// ------------------------------------------------------------------------------------------
// Browser
// ------------------------------------------------------------------------------------------

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A fresh persistent Chromium context in a temporary profile; close() removes the profile. */
export async function launch() {
  const profile = await fsp.mkdtemp(path.join(os.tmpdir(), 'prefix-exec-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      await fsp.rm(profile, { recursive: true, force: true }).catch(() => {});
    },
  };
}

/**
 * Starts a server and a browser, opens the app (at `hash`, under `base`) and waits until it is
 * mounted. `beforeGoto(app)` runs after the page exists and before navigation (to install
 * listeners or init scripts); `route` is the server's (see `startServer`). Registers cleanup
 * on the node:test context `t` when given.
 * Returns { server, context, page, url, pageErrors, assertHealthy(), close() }.
 */
export async function openApp(t, { hash = '', base = '/', beforeGoto, route } = {}) {
  const server = await startServer({ base, route });
  let browser;
  try {
    browser = await launch();
  } catch (e) {
    await server.close();
    throw e;
  }
  const { context } = browser;
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  const app = {
    server,
    context,
    page,
    url: server.url + (hash ? `#${hash}` : ''),
    pageErrors,
    async close() {
      await browser.close();
      await server.close();
    },
    /** No uncaught page error and the app's panic banner still hidden. */
    async assertHealthy() {
      const banner = await page
        .locator('#panic-banner')
        .evaluate((el) => (el.hidden ? '' : el.textContent))
        .catch(() => '');
      if (pageErrors.length || banner) {
        throw new Error(
          `the page reported errors:\n${[...pageErrors, banner].filter(Boolean).join('\n')}`,
        );
      }
    },
  };
  if (t?.after) t.after(() => app.close());
  try {
    if (beforeGoto) await beforeGoto(app);
    await page.goto(app.url);
    await waitMounted(page);
  } catch (e) {
    if (!t?.after) await app.close();
    throw e;
  }
  return app;
}

/** Waits until the Leptos app has mounted (its load-example button is visible). */
export async function waitMounted(page, timeout = 30_000) {
  await page.getByTestId('load-example').waitFor({ state: 'visible', timeout });
}

/** Sets a settings input (settings-bootstrap, settings-seed, settings-max-depth) as a user would:
 * type the value and leave the field (which fires `change`). */
export async function setSetting(page, testid, value) {
  const input = page.getByTestId(testid);
  await input.fill(String(value));
  await input.press('Tab');
}

/** The progress element's data-state (empty | computing | ready | failed). */
export function progressState(page) {
  return page.getByTestId('progress').getAttribute('data-state');
}

/** The progress text ("Done in N ms", "Bootstrap: …", an error…). */
export async function progressText(page) {
  return (await page.getByTestId('progress').innerText()).trim();
}

/**
 * Waits until the computation ends: progress data-state "ready" (returns the progress text),
 * or throws on "failed" with the app's message.
 */
export async function waitReady(page, timeout = 120_000) {
  const handle = await page.waitForFunction(
    () => {
      const el = document.querySelector('[data-testid="progress"]');
      const s = el?.getAttribute('data-state');
      return s === 'ready' || s === 'failed' ? s : false;
    },
    null,
    { timeout, polling: 50 },
  );
  const state = await handle.jsonValue();
  const text = await progressText(page);
  if (state !== 'ready') throw new Error(`computation failed: ${text}`);
  return text;
}

/**
 * Runs `action` (which must start a computation) and waits for that computation's end, even when
 * a previous one had already left the page "ready"; returns the progress text (see waitReady).
 */
export async function computeAfter(page, action, timeout) {
  await page.evaluate(() => {
    const el = document.querySelector('[data-testid="progress"]');
    window.__e2eStarted = el.getAttribute('data-state') === 'computing';
    window.__e2eObserver?.disconnect();
    window.__e2eObserver = new MutationObserver(() => {
      if (el.getAttribute('data-state') === 'computing') window.__e2eStarted = true;
    });
    window.__e2eObserver.observe(el, { attributes: true, attributeFilter: ['data-state'] });
  });
  await action();
  await page.waitForFunction(() => window.__e2eStarted === true, null, { timeout: 30_000, polling: 20 });
  return waitReady(page, timeout);
}

/** Clicks "Load example" and waits for the computation; returns the progress text. */
export function loadExample(page, timeout) {
  return computeAfter(page, () => page.getByTestId('load-example').click(), timeout);
}

/** Clicks an export button (a data-testid or a locator) and returns the download's bytes and
 * suggested file name. */
export async function download(page, button) {
  const target = typeof button === 'string' ? page.getByTestId(button) : button;
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 30_000 }), target.click()]);
  const file = await dl.path();
  return { name: dl.suggestedFilename(), bytes: await fsp.readFile(file) };
}

/** The main table's rows: [{dataset, model, method, cells: {col: {value, text, max, strong}}}]. */
export async function readMainTable(page) {
  return page.getByTestId('main-table').evaluate((table) =>
    [...table.querySelectorAll('tr[data-dataset][data-model][data-method]')].map((tr) => ({
      dataset: tr.dataset.dataset,
      model: tr.dataset.model,
      method: tr.dataset.method,
      cells: Object.fromEntries(
        [...tr.querySelectorAll('td[data-col]')].map((td) => [
          td.dataset.col,
          {
            value: td.getAttribute('data-value'),
            text: td.textContent.trim(),
            max: td.classList.contains('max'),
            strong: td.querySelector('strong') !== null,
          },
        ]),
      ),
    })),
  );
}

/** "dataset\u001fmodel\u001fmethod": one key per condition. */
export const conditionKey = (c) => `${c.dataset}\u001f${c.model}\u001f${c.method}`;

/** A report condition's value in a main-table column (a number, or null when undefined). */
export function reportValue(condition, col) {
  return col === 'rr_eligible' ? condition.rr_eligible : condition[col].value;
}

/**
 * Checks that every main-table cell's data-value equals the report's value for the same
 * condition and column, and that the table has exactly the report's conditions. Returns the
 * number of cells compared. Throws an Error listing the first mismatches.
 */
export function compareTableToReport(rows, report) {
  const problems = [];
  const byKey = new Map(report.conditions.map((c) => [conditionKey(c), c]));
  const seen = new Set();
  let cells = 0;
  for (const row of rows) {
    const key = conditionKey(row);
    const c = byKey.get(key);
    if (!c) {
      problems.push(`row ${key.replaceAll('\u001f', ' / ')} is not in the report`);
      continue;
    }
    if (seen.has(key)) problems.push(`row ${key.replaceAll('\u001f', ' / ')} appears twice`);
    seen.add(key);
    for (const col of COLUMNS) {
      const cell = row.cells[col];
      const want = reportValue(c, col);
      if (!cell) {
        problems.push(`${key}: no ${col} cell`);
        continue;
      }
      cells++;
      const ok = want === null ? cell.value === '' : cell.value !== '' && Number(cell.value) === want;
      if (!ok) {
        problems.push(
          `${key.replaceAll('\u001f', ' / ')} ${col}: data-value ${JSON.stringify(cell.value)}, report ${want}`,
        );
      }
    }
  }
  for (const key of byKey.keys()) {
    if (!seen.has(key)) problems.push(`condition ${key.replaceAll('\u001f', ' / ')} has no row`);
  }
  if (problems.length) {
    throw new Error(`main table ≠ report (${problems.length} problems):\n${problems.slice(0, 20).join('\n')}`);
  }
  return cells;
}

/**
 * The decimal texts `x` may correctly round to at `decimals` places: one text, or two when `x`
 * lies exactly halfway (round-half-even and round-half-up both accepted). Exact: works on the
 * binary value's full decimal expansion, not on toFixed.
 */
export function correctRoundings(x, decimals) {
  if (!Number.isFinite(x)) throw new Error(`not finite: ${x}`);
  const neg = x < 0 || Object.is(x, -0);
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const bits = buf.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e2;
  if (exp === 0) e2 = -1074;
  else {
    mant |= 1n << 52n;
    e2 = exp - 1075;
  }
  // |x| = mant · 2^e2 = num / den exactly.
  let num = mant;
  let den = 1n;
  if (e2 >= 0) num <<= BigInt(e2);
  else den <<= BigInt(-e2);
  const scale = 10n ** BigInt(decimals);
  const scaled = num * scale; // |x|·10^d = scaled / den
  const floor = scaled / den;
  const rem2 = (scaled % den) * 2n;
  let candidates;
  if (rem2 < den) candidates = [floor];
  else if (rem2 > den) candidates = [floor + 1n];
  else candidates = [floor, floor + 1n];
  return candidates.map((n) => {
    const digits = n.toString().padStart(decimals + 1, '0');
    const text = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
    return neg ? `-${text}` : text;
  });
}

// ------------------------------------------------------------------------------------------
// Native CLI
// ------------------------------------------------------------------------------------------

export const CLI = path.resolve(process.env.PREFIX_EXEC_CLI ?? path.join(ROOT, 'target', 'debug', 'prefix-exec'));

/** The newest modification time (ms) of the crate's sources: src/**, Cargo.toml, Cargo.lock. */
export function newestSourceMtime() {
  let newest = 0;
  const walk = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['src', 'Cargo.toml', 'Cargo.lock']) walk(path.join(ROOT, p));
  return newest;
}

/** Whether dist/ was built before the latest change to the crate's sources. */
export function distIsStale() {
  try {
    return fs.statSync(path.join(DIST, 'index.html')).mtimeMs < newestSourceMtime();
  } catch {
    return true;
  }
}

/** The CLI binary, built with `cargo build --bin prefix-exec` when missing or older than the
 * sources (PREFIX_EXEC_CLI is used as it is). */
export function ensureCli() {
  if (process.env.PREFIX_EXEC_CLI) {
    if (!fs.existsSync(CLI)) throw new Error(`PREFIX_EXEC_CLI=${CLI} does not exist`);
    return CLI;
  }
  if (!fs.existsSync(CLI) || fs.statSync(CLI).mtimeMs < newestSourceMtime()) {
    const r = spawnSync('cargo', ['build', '--bin', 'prefix-exec'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0) {
      if (!fs.existsSync(CLI)) throw new Error('cargo build --bin prefix-exec failed');
      process.stderr.write(`warning: cargo build --bin prefix-exec failed; using the existing ${CLI}\n`);
    }
  }
  return CLI;
}

function sha256File(file) {
  const hash = createHash('sha256');
  // A folder (a ToolSandbox run) hashes as its files' relative names and contents, in order.
  const add = (p, rel) => {
    if (fs.statSync(p).isDirectory()) {
      for (const name of fs.readdirSync(p).sort()) add(path.join(p, name), `${rel}/${name}`);
    } else {
      hash.update(`${rel}\0`).update(fs.readFileSync(p));
    }
  };
  add(file, '');
  return hash.digest('hex');
}

/**
 * The CLI's report JSON bytes for `prefix-exec score <files…> --json - <args…>`, run in `cwd`
 * (files are given relative to it, so the report names them as the page does). Cached under
 * e2e/.cache/cli/ by binary (size + mtime), input contents and arguments.
 */
export function cliReportBytes(files, { cwd, bootstrap = 10_000, seed = 0, extra = [] } = {}) {
  const bin = ensureCli();
  const args = ['score', ...files, '--json', '-', '--bootstrap', String(bootstrap), '--seed', String(seed), '--quiet', ...extra];
  const st = fs.statSync(bin);
  const key = createHash('sha256')
    .update(JSON.stringify({ bin, size: st.size, mtime: st.mtimeMs, args, inputs: files.map((f) => sha256File(path.resolve(cwd, f))) }))
    .digest('hex')
    .slice(0, 32);
  const cached = path.join(CACHE, 'cli', `${key}.json`);
  if (fs.existsSync(cached)) return fs.readFileSync(cached);
  const out = execFileSync(bin, args, { cwd, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  fs.mkdirSync(path.dirname(cached), { recursive: true });
  fs.writeFileSync(`${cached}.tmp${process.pid}`, out);
  fs.renameSync(`${cached}.tmp${process.pid}`, cached);
  return out;
}

/** The CLI's report (parsed) for one file, named by its base name. */
export function cliReport(file, opts = {}) {
  return JSON.parse(cliReportBytes([path.basename(file)], { cwd: path.dirname(file), ...opts }).toString('utf8'));
}

// ------------------------------------------------------------------------------------------
// Inputs
// ------------------------------------------------------------------------------------------

/**
 * The synthetic grid repeated `copies` times (`cargo run --release --example synth_grid --
 * --copies N`), generated once into e2e/.cache/ (or `dir`).
 */
export function ensureGrid(copies, dir = CACHE) {
  const file = path.join(dir, `synthetic-grid-x${copies}.jsonl`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${file}.tmp${process.pid}`;
  const r = spawnSync(
    'cargo',
    ['run', '--quiet', '--release', '--example', 'synth_grid', '--', '--copies', String(copies), '-o', tmp],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 },
  );
  if (r.status !== 0) throw new Error(`synth_grid --copies ${copies} failed:\n${r.stderr}`);
  fs.renameSync(tmp, file);
  return file;
}

/** A fresh temporary directory, removed after the test. */
export async function tempDir(t) {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'prefix-exec-e2e-data-'));
  t?.after?.(() => fsp.rm(dir, { recursive: true, force: true }));
  return dir;
}
