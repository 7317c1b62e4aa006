// How much of a pick's browser CPU is V8 compiling the worker's WebAssembly: a Chrome trace
// (CDP Tracing) from the pick to "ready", summing the CPU time (tdur) of V8's wasm compile
// events — baseline (Liftoff) and lazy compiles, and the top-tier (TurboFan) compiles of the
// functions that ran hot, which V8 does on background threads while the workers read. The
// page is fresh (a new browser profile, a server that forbids caching), as in
// bench/browser-big.mjs: no compiled code is cached from an earlier visit.
//
//   node bench/wasm-compile.mjs --file bench/out/leaderboard-v3-x15.zip [--top N]
//
// --top N: the N costliest top-tier compiles (V8 batches a few functions per event and names
// none: to name them, run Chromium with --js-flags=--trace-wasm-compilation-times, whose lines
// give each function's index, and read the names from a build with them, -g). DUMP_TRACE=FILE
// writes the trace's events as JSON.
//
// Prints numbers only; tracing slows the run somewhat.

import { DIST, launch, setSetting, startServer, waitMounted } from '../e2e/lib.mjs';

const i = process.argv.indexOf('--file');
const file = i > 0 ? process.argv[i + 1] : null;
if (!file) throw new Error('--file FILE [--top N]');
const t = process.argv.indexOf('--top');
const top = t > 0 ? Number(process.argv[t + 1]) : 0;
const server = await startServer({ root: process.env.E2E_DIST ?? DIST });
const browser = await launch();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  await waitMounted(page);
  await setSetting(page, 'settings-bootstrap', 0);
  await new Promise((r) => setTimeout(r, 1500));
  const cdp = await browser.context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', {
    traceConfig: { includedCategories: ['v8.wasm', 'disabled-by-default-v8.wasm.detailed'], recordMode: 'recordAsMuchAsPossible' },
    transferMode: 'ReportEvents',
  });
  const t0 = performance.now();
  await page.getByTestId('file-input').setInputFiles(file);
  await page.waitForFunction(
    () => {
      const el = document.querySelector('[data-testid="progress"]');
      return el?.getAttribute('data-state') === 'ready' && (el.querySelector('.progress-text')?.textContent ?? '').startsWith('Done');
    },
    null,
    { polling: 50, timeout: 300_000 },
  );
  const seconds = (performance.now() - t0) / 1000;
  await cdp.send('Tracing.end');
  await complete;
  if (process.env.DUMP_TRACE) (await import('node:fs')).writeFileSync(process.env.DUMP_TRACE, JSON.stringify(events));
  console.log(`pick→ready (traced)                 ${seconds.toFixed(1)} s`);
  for (const [name, label] of [
    ['wasm.TopTierCompilation', 'top-tier compiles (TurboFan)'],
    ['wasm.CompileLazy', 'lazy compiles (first calls)'],
    ['wasm.CompileBaseline', 'baseline compiles (Liftoff)'],
  ]) {
    const es = events.filter((e) => e.name === name && e.ph === 'X');
    const cpu = es.reduce((s, e) => s + (e.tdur ?? 0), 0) / 1e6;
    console.log(`${label.padEnd(35)} ${String(es.length).padStart(5)} functions   ${cpu.toFixed(2)} CPU-s`);
    if (top > 0 && name === 'wasm.TopTierCompilation') {
      for (const e of [...es].sort((a, b) => (b.tdur ?? 0) - (a.tdur ?? 0)).slice(0, top)) {
        console.log(`  ${((e.tdur ?? 0) / 1000).toFixed(1).padStart(7)} CPU-ms`);
      }
    }
  }
} finally {
  await browser.close();
  await server.close?.();
}
