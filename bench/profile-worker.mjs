// Where the scoring worker's time goes: a V8 CPU profile of the worker while one file (or
// folder) is read and scored in headless Chromium, printed as the functions with the most self
// time. The worker is reached through the page's DevTools session (Target.setAutoAttach); the
// wasm functions are named by the wasm's name section where the build kept it.
//
//   node bench/profile-worker.mjs --file bench/out/leaderboard-v3-x15.tar.gz [--top 40]
//                                 [--bootstrap 0] [--wasm-gzip] [--names] [--inclusive]
//                                 [--under NAME] [--pool K] [--page] [--timeline]
//
// The release build strips the wasm's function names. --names serves a copy of dist/ whose
// worker wasm is the same cargo output put through wasm-bindgen and wasm-opt -O3 again with
// its names kept (-g), so the profile names Rust functions (timings as the release's, within
// noise). --page profiles the page's main thread instead of a worker. --inclusive ranks functions by the time spent in them and in what they called (each
// function counted once per sample however deep it recurs); --under NAME counts only the samples
// whose stack holds a function whose name contains NAME. Prints numbers only; a profile samples every 200 µs and slows the worker somewhat.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { DIST, ROOT, launch, setSetting, startServer, waitMounted } from '../e2e/lib.mjs';

const arg = (name, fallback) => {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] && !process.argv[i + 1].startsWith('--') ? process.argv[i + 1] : fallback;
};
const file = arg('file', null);
const folder = arg('folder', null);
const top = Number(arg('top', 40));
const bootstrap = Number(arg('bootstrap', 0));
const wasmGzip = process.argv.includes('--wasm-gzip');
const inclusive = process.argv.includes('--inclusive');
const under = arg('under', null);
const bucket = Number(arg('bucket', 0.25));
// --from S --until S: only the samples in that window of the profile (seconds from its start).
const fromArg = Number(arg('from', 0));
const untilArg = Number(arg('until', Infinity));
if (!file && !folder) throw new Error('--file or --folder');

let root = DIST;
if (process.argv.includes('--names')) {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'prefix-exec-named-'));
  fs.cpSync(DIST, root, { recursive: true });
  const bound = fs.mkdtempSync(path.join(os.tmpdir(), 'prefix-exec-bound-'));
  const built = path.join(ROOT, 'target', 'wasm32-unknown-unknown', 'wasm-worker', 'worker.wasm');
  execFileSync(path.join(os.homedir(), '.cargo', 'bin', 'wasm-bindgen'), ['--target', 'no-modules', '--no-typescript', '--out-dir', bound, '--out-name', 'worker', built]);
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'wasm-opt'), ['-O3', '-g', '-ocimfs', '100', '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', path.join(bound, 'worker_bg.wasm'), '-o', path.join(root, 'worker_bg.wasm')]);
  fs.copyFileSync(path.join(bound, 'worker.js'), path.join(root, 'worker.js'));
}
const server = await startServer({ root });
const browser = await launch();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  await waitMounted(page);
  await setSetting(page, 'settings-bootstrap', bootstrap);
  // The setting re-scores the bundled example: let that end before the profile starts.
  await new Promise((r) => setTimeout(r, 1000));
  if (wasmGzip) for (const w of page.workers()) await w.evaluate(() => { self.DecompressionStream = undefined; });
  const cdp = await browser.context.newCDPSession(page);
  const sessions = [];
  const waiting = new Map();
  let next = 1;
  cdp.on('Target.attachedToTarget', (e) => {
    if (e.targetInfo.type === 'worker') sessions.push(e.sessionId);
  });
  // A session is a path: [worker] for the scoring worker, [worker, pool worker] for one of its
  // pool's (nested targets, reached through their parent's session).
  const nested = [];
  const onMessage = (path, text) => {
    const m = JSON.parse(text);
    if (m.method === 'Target.attachedToTarget' && m.params.targetInfo.type === 'worker') nested.push([...path, m.params.sessionId]);
    else if (m.method === 'Target.receivedMessageFromTarget') onMessage([...path, m.params.sessionId], m.params.message);
    else if (m.id && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
    }
  };
  cdp.on('Target.receivedMessageFromTarget', (e) => onMessage([e.sessionId], e.message));
  const wrap = (path, message) => {
    for (let k = path.length - 1; k >= 1; k--) {
      message = JSON.stringify({ id: next++, method: 'Target.sendMessageToTarget', params: { sessionId: path[k], message } });
    }
    return message;
  };
  const send = (sessionId, method, params = {}) =>
    sessionId === 'page' ? cdp.send(method, params).then((result) => ({ result })) : new Promise((resolve) => {
      const path = Array.isArray(sessionId) ? sessionId : [sessionId];
      const id = next++;
      waiting.set(id, resolve);
      cdp.send('Target.sendMessageToTarget', { sessionId: path[0], message: wrap(path, JSON.stringify({ id, method, params })) });
    });
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
  for (let i = 0; i < 50 && sessions.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  // The page's first worker is the scoring worker (the pool's are its children): --pool K
  // profiles the scoring worker's pool worker K instead.
  console.log(`# ${sessions.length} worker sessions`);
  let worker = sessions[Number(arg("session", 0))];
  const poolIndex = arg('pool', null);
  if (poolIndex !== null) {
    send(worker, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
    for (let i = 0; i < 50 && nested.length <= Number(poolIndex); i++) await new Promise((r) => setTimeout(r, 100));
    console.log(`# ${nested.length} pool worker sessions`);
    worker = nested[Number(poolIndex)];
  }
  if (process.argv.includes('--page')) worker = 'page';
  await send(worker, 'Profiler.enable');
  await send(worker, 'Profiler.setSamplingInterval', { interval: 200 });
  await send(worker, 'Profiler.start');
  const t0 = performance.now();
  if (file) await page.getByTestId('file-input').setInputFiles(file);
  else await page.getByTestId('folder-input').setInputFiles(folder);
  await page.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, { timeout: 600_000, polling: 100 });
  const seconds = (performance.now() - t0) / 1000;
  const { result } = await send(worker, 'Profiler.stop');
  const { nodes, samples, timeDeltas } = result.profile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nameOf = (id) => {
    const f = byId.get(id).callFrame;
    return f.functionName || `(${f.url.split('/').pop() || 'anonymous'})`;
  };
  const self = new Map();
  let total = 0;
  let clock = 0;
  // --last S: the window is the profile's last S seconds.
  const last = Number(arg('last', NaN));
  const span = timeDeltas.reduce((a, d) => a + d, 0);
  const [from, until] = Number.isFinite(last) ? [span / 1e6 - last, Infinity] : [fromArg, untilArg];
  samples.forEach((id, k) => {
    const dt = timeDeltas[k] ?? 0;
    clock += dt;
    if (clock < from * 1e6 || clock > until * 1e6) return;
    if (under) {
      let inside = false;
      for (let at = id; at !== undefined && !inside; at = parent.get(at)) inside = nameOf(at).includes(under);
      if (!inside) return;
    }
    if (inclusive) {
      const seen = new Set();
      for (let at = id; at !== undefined; at = parent.get(at)) seen.add(nameOf(at));
      for (const name of seen) self.set(name, (self.get(name) ?? 0) + dt);
    } else {
      const name = nameOf(id);
      self.set(name, (self.get(name) ?? 0) + dt);
    }
    total += dt;
  });
  console.log(`# pick→ready ${seconds.toFixed(1)} s; worker profile ${(total / 1e6).toFixed(2)} s sampled`);
  if (process.argv.includes('--timeline')) {
    // Per quarter second of the profile: the share of samples busy, and the phases they were in
    // (a sample's phase: the second-outermost prefix_exec function on its stack).
    const buckets = [];
    let at = 0;
    samples.forEach((id, k) => {
      at += timeDeltas[k] ?? 0;
      const b = (buckets[Math.floor(at / (bucket * 1e6))] ??= { n: 0, busy: 0, phases: new Map() });
      b.n += 1;
      const stack = [];
      for (let f = id; f !== undefined; f = parent.get(f)) stack.push(nameOf(f));
      if (stack[0] === '(idle)') return;
      b.busy += 1;
      const ours = stack.filter((n) => n.startsWith('prefix_exec::')).map((n) => n.replace(/::h[0-9a-f]{16}$/, ''));
      const phase = ours[ours.length - 2] ?? ours[ours.length - 1] ?? stack[0];
      b.phases.set(phase, (b.phases.get(phase) ?? 0) + 1);
    });
    buckets.forEach((b, i) => {
      if (!b) return;
      const top = [...b.phases].sort((x, y) => y[1] - x[1]).slice(0, 3).map(([n, c]) => `${n.slice(-60)} ${Math.round((100 * c) / b.n)}%`);
      console.log(`${(i * bucket).toFixed(2).padStart(6)} s  busy ${String(Math.round((100 * b.busy) / b.n)).padStart(3)} %  ${top.join(' | ')}`);
    });
  }
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(us / 1e3).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name.slice(0, 140)}`);
  }
} finally {
  await browser.close();
  await server.close?.();
}
