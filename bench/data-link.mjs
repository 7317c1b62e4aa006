// Browser benchmark of a `?data=URL` link: the time from opening the page at `?data=` to the
// report, with the body served at a set rate (a download that takes time, as a real one does).
//
//   node bench/data-link.mjs --file bench/out/leaderboard-v3-x15.tar.gz [--mbps 20] [--runs 3]
//
// The app is the built dist/ (E2E_DIST to point elsewhere, e.g. an older build to compare).
// The server sends the body in 64 KiB pieces at --mbps MB/s (0: as fast as it can) with its
// Content-Length. Prints, per run: the download's time (first to last byte sent, as the server
// saw it) and open → ready; with reading while downloading, ready comes soon after the last byte,
// not a whole read later. The machine's load is printed beside them. Nothing is asserted.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { DIST, launch, startServer, waitMounted } from '../e2e/lib.mjs';
import { option, sendPaced } from './paced.mjs';

const file = option('file');
if (!file) throw new Error('--file is required');
const mbps = Number(option('mbps', '20'));
const runs = Number(option('runs', '3'));
const body = fs.readFileSync(file);
const name = path.basename(file);

let sent = null;
const route = async (req, res, pathname) => {
  if (pathname !== `/runs/${name}`) return false;
  sent = await sendPaced(res, body, mbps);
  return true;
};

console.log(`# ${name}: ${(body.length / 1e6).toFixed(1)} MB at ${mbps > 0 ? `${mbps} MB/s` : 'full speed'}; app ${DIST}`);
console.log(`# machine: ${os.cpus().length} cores; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const server = await startServer({ route });
try {
  for (let run = 1; run <= runs; run++) {
    const browser = await launch();
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      await page.goto(server.url);
      await waitMounted(page);
      sent = null;
      const start = performance.now();
      await page.goto(`${server.url}?data=runs/${name}`);
      await page.waitForFunction(() => document.querySelector('[data-testid="progress"]')?.getAttribute('data-state') === 'ready', null, { timeout: 600_000 });
      const ready = (performance.now() - start) / 1000;
      const done = await page.evaluate(() => document.querySelector('[data-testid="progress"]')?.textContent ?? '');
      console.log(`run ${run}: download ${sent?.toFixed(1) ?? '?'} s, open→ready ${ready.toFixed(1)} s (${done.trim()}); load ${os.loadavg()[0].toFixed(2)}`);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
