// Browser benchmark of the two ways to pick a folder (#28): `<input webkitdirectory>` (the
// browser builds a FileList of every file under the folder before the page sees one) against
// the File System Access API (`showDirectoryPicker`, the folder walked through its handle by
// the page). Headless Chromium through playwright-core cannot drive the picker, so for the
// second the picker is replaced by an init script that returns a directory of the origin
// private file system (OPFS) holding a copy of the folder (copied before the clock starts).
//
//   node bench/folder-pick.mjs --folder bench/out/leaderboard-v3-x15 [--bootstrap 0] [--runs 1]
//
// Prints, per run and way, pick → files listed (the page's file list shows them) and
// pick → ready (the report is shown), and for the second the floor of a plain JS walk of the
// copy. Numbers only; nothing is asserted.

import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { launch, setSetting, startServer, waitMounted, waitReady } from '../e2e/lib.mjs';

function option(name, fallback) {
  const i = process.argv.lastIndexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const folder = path.resolve(option('folder', 'bench/out/leaderboard-v3-x15'));
const bootstrap = Number(option('bootstrap', 0));
const runs = Number(option('runs', 1));
const NAME = path.basename(folder);

/** Every file under `dir`, as paths relative to it. */
function walk(dir, rel = '') {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(dir, r));
    else if (e.isFile()) out.push(r);
  }
  return out;
}

/** The entries (files or run groups) the page's file list shows. */
async function listed(page) {
  return page.locator('[data-testid="file-list"] > li').count().catch(() => 0);
}

async function openPage(server, context, { opfs }) {
  const page = context.pages()[0] ?? (await context.newPage());
  if (opfs) {
    await page.addInitScript((name) => {
      window.showDirectoryPicker = async () => (await navigator.storage.getDirectory()).getDirectoryHandle(name);
    }, NAME);
  }
  await page.goto(server.url);
  await waitMounted(page);
  await setSetting(page, 'settings-bootstrap', bootstrap);
  return page;
}

/** Copies the folder into the page's OPFS under NAME (files served by a route, 32 at once). */
async function fillOpfs(page, files) {
  await page.route('**/__bench_data/**', async (route) => {
    const rel = decodeURIComponent(new URL(route.request().url()).pathname.replace(/^.*\/__bench_data\//, ''));
    await route.fulfill({ status: 200, body: fs.readFileSync(path.join(folder, rel)) });
  });
  await page.evaluate(
    async ({ name, files }) => {
      const root = await (await navigator.storage.getDirectory()).getDirectoryHandle(name, { create: true });
      const dirs = new Map([['', root]]);
      const dirOf = async (rel) => {
        const parts = rel.split('/');
        parts.pop();
        let at = '';
        let handle = root;
        for (const p of parts) {
          at = at ? `${at}/${p}` : p;
          if (!dirs.has(at)) dirs.set(at, await handle.getDirectoryHandle(p, { create: true }));
          handle = dirs.get(at);
        }
        return handle;
      };
      let next = 0;
      const worker = async () => {
        while (next < files.length) {
          const rel = files[next++];
          const bytes = await (await fetch(`/__bench_data/${rel.split('/').map(encodeURIComponent).join('/')}`)).arrayBuffer();
          const dir = await dirOf(rel);
          const w = await (await dir.getFileHandle(rel.split('/').pop(), { create: true })).createWritable();
          await w.write(bytes);
          await w.close();
        }
      };
      await Promise.all(Array.from({ length: 32 }, worker));
    },
    { name: NAME, files },
  );
  await page.unroute('**/__bench_data/**');
}

async function timePick(page, pick) {
  const start = performance.now();
  await pick();
  let listedAt = null;
  // The file list fills in one update; then the computation runs to "ready".
  while (listedAt === null) {
    if ((await listed(page)) > 0) listedAt = performance.now();
    else await new Promise((r) => setTimeout(r, 50));
  }
  await waitReady(page, 1_800_000);
  return { listed: (listedAt - start) / 1000, ready: (performance.now() - start) / 1000 };
}

const files = walk(folder);
console.log(`# ${NAME}: ${files.length} files, ${(files.reduce((s, f) => s + fs.statSync(path.join(folder, f)).size, 0) / 1e6).toFixed(1)} MB; bootstrap ${bootstrap}`);
const server = await startServer();
try {
  for (let run = 1; run <= runs; run++) {
    for (const way of ['webkitdirectory', 'showDirectoryPicker']) {
      const browser = await launch();
      try {
        const opfs = way === 'showDirectoryPicker';
        const page = await openPage(server, browser.context, { opfs });
        if (opfs) {
          const t = performance.now();
          await fillOpfs(page, files);
          console.log(`# OPFS filled in ${((performance.now() - t) / 1000).toFixed(1)} s (not timed)`);
          // The floor of a handle walk: the same folders listed and files asked for in plain JS,
          // sequentially (what the page's walk does many at once).
          const walk = await page.evaluate(async (name) => {
            const t0 = performance.now();
            const handles = [];
            const stack = [await (await navigator.storage.getDirectory()).getDirectoryHandle(name)];
            while (stack.length) {
              for await (const h of stack.pop().values()) (h.kind === 'directory' ? stack : handles).push(h);
            }
            const t1 = performance.now();
            for (let i = 0; i < handles.length; i += 256) await Promise.all(handles.slice(i, i + 256).map((h) => h.getFile()));
            return { list: (t1 - t0) / 1000, files: (performance.now() - t1) / 1000 };
          }, NAME);
          console.log(`# plain JS walk of the copy: folders listed one by one ${walk.list.toFixed(2)} s, getFile 256 at once ${walk.files.toFixed(2)} s`);
        }
        console.log(`# load average: ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
        const t = await timePick(page, () =>
          opfs ? page.getByTestId('folder-button').click() : page.getByTestId('folder-input').setInputFiles(folder),
        );
        console.log(`run ${run} ${way}: pick→listed ${t.listed.toFixed(2)} s, pick→ready ${t.ready.toFixed(2)} s`);
      } finally {
        await browser.close();
      }
    }
  }
} finally {
  await server.close();
}
