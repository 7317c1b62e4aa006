// Browser benchmark of a big input: a ≈ 1 GB JSONL picked in headless Chromium (Debian's
// /usr/bin/chromium through playwright-core), with the time to a report and the memory used.
//
//   node bench/browser-big.mjs --file bench/out/grid-1gb.jsonl [--bootstrap 0] [--with-default]
//                              [--workers N] [--interval 250] [--timeout 7200] [--samples FILE.csv]
//
// One run per resample count: --bootstrap (default 0, the bootstrap off), and with
// --with-default a second run with the app's default (10,000). --workers sets the app's
// "Workers" setting (default: the app's own default, the machine's cores up to 8; 1 = the
// scoring worker alone). Each run uses a fresh browser
// profile. Before the pick, and every --interval ms from the pick until "ready", it samples:
//   - the progress text and the bar's aria-valuenow;
//   - the browser's memory: VmRSS summed over all its processes (the process tree under this
//     Node process: Playwright starts Chromium as its child; only one browser runs at a time),
//     and the same sum of PSS (/proc/PID/smaps_rollup, which splits shared pages fairly), with
//     the biggest process type (browser, renderer, gpu-process, utility, zygote…);
//   - the page's JS heap (CDP Runtime.getHeapUsage).
// After "ready" it waits --settle seconds (default 2) and samples again, adding the WebAssembly
// memory of the worker and of the page (their wasm_bindgen exports' memory) and the page's
// performance.memory. The worker's memory cannot be read while it computes: the computation is
// one long task, and the worker answers DevTools only once it is done; its share is in the
// renderer's RSS. --interval 0 samples nothing while it computes: the sampling takes CPU from
// the two cores the app computes on (0.5 s of the 15-run leaderboard's 5 s), so the time is
// best taken without it, and the memory in another run with it. Also printed: the CPU seconds
// each of the browser's threads used from the pick to "ready" (/proc, by thread name).
// Prints numbers only; nothing is asserted.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { ROOT, launch, setSetting, startServer, waitMounted } from '../e2e/lib.mjs';

function option(name, fallback) {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] && !process.argv[i + 1].startsWith('--') ? process.argv[i + 1] : fallback;
}
const flag = (name) => process.argv.includes(`--${name}`);
// --wasm-gzip: gzip inflated by the app's wasm decoder, not the browser's DecompressionStream.
const wasmGzip = flag('wasm-gzip');

// --folder DIR picks a whole folder with the app's "Choose a folder…" input instead of a file.
const folder = option('folder', null);
const file = path.resolve(folder ?? option('file', path.join(ROOT, 'bench', 'out', 'grid-1gb.jsonl')));
const bootstraps = [Number(option('bootstrap', 0))];
if (flag('with-default') && !bootstraps.includes(10_000)) bootstraps.push(10_000);
const workers = option('workers', null);
const interval = Number(option('interval', 250));
const timeoutS = Number(option('timeout', 7200));
const settleS = Number(option('settle', 2));
const samplesFile = option('samples', null);

const MB = 1e6;
const MiB = 1024 * 1024;
const fmtMiB = (b) => (Number.isFinite(b) ? `${(b / MiB).toFixed(0)} MiB` : 'n/a');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------
// Process memory (Linux /proc)
// ------------------------------------------------------------------------------------------

/** PIDs of all descendants of `root` (not `root` itself). */
function descendants(root) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  const out = [];
  const queue = [root];
  while (queue.length) {
    for (const c of children.get(queue.shift()) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

function readKb(text, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Memory of the browser's process tree: { rss, pss, procs, byType: {type: {rss, pss, n}} }. */
function browserMemory() {
  const result = { rss: 0, pss: 0, procs: 0, byType: {} };
  for (const pid of descendants(process.pid)) {
    let status;
    let cmdline;
    try {
      status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!/chrom/i.test(cmdline)) continue; // e.g. a `sh` of the Debian wrapper
    const rss = readKb(status, 'VmRSS');
    let pss = 0;
    try {
      pss = readKb(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      pss = NaN;
    }
    const type = /--type=([\w-]+)/.exec(cmdline)?.[1] ?? 'browser';
    const t = (result.byType[type] ??= { rss: 0, pss: 0, n: 0 });
    t.rss += rss;
    t.pss += pss;
    t.n++;
    result.rss += rss;
    result.pss += pss;
    result.procs++;
  }
  return result;
}

// ------------------------------------------------------------------------------------------
// Page and worker probes
// ------------------------------------------------------------------------------------------

/** CPU ticks (1/100 s) used so far by each thread of the browser's processes, by "pid/tid". */
function browserThreads() {
  const threads = new Map();
  for (const pid of descendants(process.pid)) {
    let tids;
    try {
      if (!/chrom/i.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
      tids = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(`${pid}/${tid}`, { name, ticks: Number(f[11]) + Number(f[12]) });
      } catch {
        // gone
      }
    }
  }
  return threads;
}

/** CPU seconds each thread used between two `browserThreads`, most first. */
function cpuBetween(before, after) {
  const used = [];
  for (const [key, t] of after) {
    const s = (t.ticks - (before.get(key)?.ticks ?? 0)) / 100;
    if (s > 0) used.push({ name: t.name, s });
  }
  return used.sort((a, b) => b.s - a.s);
}

/** Resolves to `promise`'s value, or to `fallback` after `ms`. */
function within(promise, ms, fallback) {
  return Promise.race([promise.catch(() => fallback), sleep(ms).then(() => fallback)]);
}

/** The newest worker's wasm memory (its wasm_bindgen exports' memory), NaN when unknown. */
function workerWasmBytes(page) {
  const worker = page.workers().at(-1);
  if (!worker) return NaN;
  return within(
    worker.evaluate(async () => {
      // Once initialized, wasm_bindgen() resolves to the instantiated module's exports.
      const w = await wasm_bindgen(); // eslint-disable-line no-undef
      return w.memory.buffer.byteLength;
    }),
    10_000,
    NaN,
  );
}

/** The page's wasm memory: the app module (app.js, an ES module) caches its exports. */
function pageWasmBytes(page) {
  return within(
    page.evaluate(async () => {
      const m = await import(new URL('./app.js', document.baseURI).href);
      const w = await m.default();
      return w.memory.buffer.byteLength;
    }),
    10_000,
    NaN,
  );
}

async function heapUsage(cdp) {
  const h = await within(cdp.send('Runtime.getHeapUsage'), 2_000, null);
  return h ? { used: h.usedSize, total: h.totalSize } : { used: NaN, total: NaN };
}

async function progress(page) {
  return within(
    page.evaluate(() => {
      const el = document.querySelector('[data-testid="progress"]');
      return {
        state: el?.getAttribute('data-state') ?? '',
        text: el?.querySelector('.progress-text')?.textContent.trim() ?? '',
        value: Number(el?.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? NaN),
      };
    }),
    2_000,
    { state: '?', text: '(page busy)', value: NaN },
  );
}

// ------------------------------------------------------------------------------------------
// A run
// ------------------------------------------------------------------------------------------

async function run(server, bootstrap) {
  const browser = await launch();
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const cdp = await browser.context.newCDPSession(page);
    await page.goto(server.url);
    await waitMounted(page);
    await setSetting(page, 'settings-bootstrap', bootstrap);
    const input = page.getByTestId('settings-bootstrap');
    const shown = await input.inputValue();
    if (shown !== String(bootstrap)) throw new Error(`the app shows ${shown} resamples, not ${bootstrap}`);
    // Set the pool size before the pick: the page starts the pool's workers when it changes.
    if (workers !== null) await setSetting(page, 'settings-workers', Number(workers));
    await sleep(1000);
    if (wasmGzip) {
      // The scoring worker without DecompressionStream: gzip inflated by the wasm decoder.
      for (const w of page.workers()) await w.evaluate(() => { self.DecompressionStream = undefined; });
    }
    const before = { mem: browserMemory(), heap: await heapUsage(cdp) };

    const samples = [];
    const cpuBefore = browserThreads();
    const t0 = performance.now();
    let done = false;
    const sampler = (async () => {
      while (!done && interval > 0) {
        const next = performance.now() + interval;
        const [p, heap] = await Promise.all([progress(page), heapUsage(cdp)]);
        const mem = browserMemory();
        samples.push({
          t: (performance.now() - t0) / 1000,
          state: p.state,
          text: p.text,
          value: p.value,
          rss: mem.rss,
          pss: mem.pss,
          procs: mem.procs,
          byType: mem.byType,
          heapUsed: heap.used,
        });
        await sleep(Math.max(0, next - performance.now()));
      }
    })();

    await page.getByTestId(folder ? 'folder-input' : 'file-input').setInputFiles(file);
    let final;
    try {
      const handle = await page.waitForFunction(
        () => {
          const s = document.querySelector('[data-testid="progress"]')?.getAttribute('data-state');
          return s === 'ready' || s === 'failed' ? s : false;
        },
        null,
        { timeout: timeoutS * 1000, polling: 100 },
      );
      final = await handle.jsonValue();
    } finally {
      done = true;
      await sampler;
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuBetween(cpuBefore, browserThreads());
    const text = (await progress(page)).text;
    if (final !== 'ready') throw new Error(`the computation failed: ${text}`);
    await page.locator('[data-testid="main-table"][data-state="ready"]').waitFor({ timeout: 600_000 });
    const notes = await page.getByTestId('report-note').allInnerTexts();
    await sleep(settleS * 1000);
    const after = {
      mem: browserMemory(),
      heap: await heapUsage(cdp),
      perf: await within(
        page.evaluate(() => (performance.memory ? { used: performance.memory.usedJSHeapSize, total: performance.memory.totalJSHeapSize } : null)),
        5_000,
        null,
      ),
      workerWasm: await workerWasmBytes(page),
      pageWasm: await pageWasmBytes(page),
    };
    return { bootstrap, seconds, cpu, text, notes, before, after, samples, pageErrors };
  } finally {
    await browser.close();
  }
}

function report(r) {
  if (r.samples.length === 0) {
    console.log(`## resamples ${r.bootstrap}, workers ${workers ?? 'default'} (not sampled while computing)`);
    printCpu(r);
    console.log(`pick→ready                          ${r.seconds.toFixed(1)} s   (${r.text})`);
    for (const e of r.pageErrors) console.log(`page error: ${e}`);
    return;
  }
  const peak = r.samples.reduce((a, s) => (s.rss > a.rss ? s : a), { rss: -1 });
  const peakPss = Math.max(...r.samples.map((s) => s.pss));
  const peakHeap = Math.max(...r.samples.map((s) => s.heapUsed).filter(Number.isFinite));
  console.log(`## resamples ${r.bootstrap}, workers ${workers ?? 'default'}`);
  // A timeline of at most ~40 lines.
  const stride = Math.max(1, Math.ceil(r.samples.length / 40));
  console.log('     t  state      bar  total RSS  total PSS  page heap  progress');
  r.samples.forEach((s, i) => {
    if (i % stride !== 0 && i !== r.samples.length - 1 && s !== peak) return;
    console.log(
      `${s.t.toFixed(1).padStart(6)}  ${s.state.padEnd(9)} ${String(s.value).padStart(4)}  ${fmtMiB(s.rss).padStart(9)}  ${fmtMiB(s.pss).padStart(9)}  ${fmtMiB(s.heapUsed).padStart(9)}  ${s.text}${s === peak ? '   <- peak RSS' : ''}`,
    );
  });
  const types = Object.entries(peak.byType ?? {})
    .sort((a, b) => b[1].rss - a[1].rss)
    .map(([t, v]) => `${t}×${v.n} ${fmtMiB(v.rss)}`)
    .join(', ');
  console.log(`pick→ready                          ${r.seconds.toFixed(1)} s   (${r.text})`);
  printCpu(r);
  console.log(`RSS before loading (sum, ${r.before.mem.procs} procs)     ${fmtMiB(r.before.mem.rss)}   (PSS ${fmtMiB(r.before.mem.pss)})`);
  console.log(`peak RSS while computing (sum)      ${fmtMiB(peak.rss)} at ${peak.t?.toFixed(1)} s   (peak PSS ${fmtMiB(peakPss)})`);
  console.log(`  by process type at the peak       ${types}`);
  console.log(`RSS after ready (+${settleS} s, sum)        ${fmtMiB(r.after.mem.rss)}   (PSS ${fmtMiB(r.after.mem.pss)})`);
  console.log(`page JS heap: before / peak / after ${fmtMiB(r.before.heap.used)} / ${fmtMiB(peakHeap)} / ${fmtMiB(r.after.heap.used)} used (after: ${fmtMiB(r.after.heap.total)} total)`);
  if (r.after.perf) console.log(`page performance.memory after       ${fmtMiB(r.after.perf.used)} used of ${fmtMiB(r.after.perf.total)}`);
  console.log(`page wasm memory after ready        ${fmtMiB(r.after.pageWasm)}`);
  console.log(`worker wasm memory after ready      ${fmtMiB(r.after.workerWasm)}`);
  for (const n of r.notes) console.log(`report note: ${n}`);
  for (const e of r.pageErrors) console.log(`page error: ${e}`);
}

function printCpu(r) {
  const total = r.cpu.reduce((a, t) => a + t.s, 0);
  const busiest = r.cpu.slice(0, Number(option("threads", 6))).map((t) => `${t.name} ${t.s.toFixed(2)}`).join(', ');
  console.log(`browser CPU during pick→ready       ${total.toFixed(2)} s   (${busiest})`);
}

/** Bytes and files under a folder (or one file). */
function sizeOf(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return { bytes: st.size, files: 1 };
  let bytes = 0;
  let files = 0;
  for (const e of fs.readdirSync(p, { withFileTypes: true })) {
    const s = sizeOf(path.join(p, e.name));
    bytes += s.bytes;
    files += s.files;
  }
  return { bytes, files };
}
const { bytes: size, files: fileCount } = sizeOf(file);
console.log(`# ${path.relative(ROOT, file)}: ${(size / MB).toFixed(1)} MB (${fmtMiB(size)}), ${fileCount} files`);
console.log(
  `# headless ${process.env.CHROMIUM ?? '/usr/bin/chromium'}; sampling every ${interval} ms; machine: ${os.cpus().length} cores, ${fmtMiB(os.totalmem())} RAM`,
);
const server = await startServer();
const results = [];
try {
  for (const b of bootstraps) {
    const r = await run(server, b);
    results.push(r);
    report(r);
  }
} finally {
  await server.close();
}
if (samplesFile) {
  const lines = ['bootstrap,t_s,state,bar,rss_bytes,pss_bytes,procs,page_heap_used_bytes,text'];
  for (const r of results) {
    for (const s of r.samples) {
      lines.push([r.bootstrap, s.t.toFixed(3), s.state, s.value, s.rss, s.pss, s.procs, s.heapUsed, JSON.stringify(s.text)].join(','));
    }
  }
  fs.writeFileSync(samplesFile, lines.join('\n') + '\n');
  console.log(`# samples written to ${samplesFile}`);
}
