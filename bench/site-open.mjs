// Browser benchmark of a published report site: the time from opening the site to its numbers
// recomputed from its data (the header's "matches the published report"), with the data files
// served at a set rate, as a static host's download takes time.
//
//   node bench/site-open.mjs --site DIR [--mbps 20] [--runs 3]
//
// DIR is a folder `prefix-exec site … -o DIR` wrote (its app is the one it was written with:
// `--app` an older build to compare). The server sends each file under data/ in 64 KiB pieces at
// --mbps MB/s (0: as fast as it can) with its Content-Length. Prints, per run: the data's
// download time (as the server saw it), open → ready, and the integrity warnings shown; the
// machine's load beside them. Nothing is asserted.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import { launch, startServer } from '../e2e/lib.mjs';
import { option, sendPaced } from './paced.mjs';

const site = option('site');
if (!site) throw new Error('--site is required');
const root = path.resolve(site);
const mbps = Number(option('mbps', '20'));
const runs = Number(option('runs', '3'));
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'report.json'), 'utf8'));
const bytes = manifest.data.reduce((n, d) => n + d.bytes, 0);

let sent = null;
const route = async (req, res, pathname) => {
  const m = pathname.match(/^\/(data\/.+)$/);
  if (!m || !fs.existsSync(path.join(root, m[1]))) return false;
  const body = fs.readFileSync(path.join(root, m[1]));
  sent = await sendPaced(res, body, mbps);
  return true;
};

console.log(`# ${site}: data ${(bytes / 1e6).toFixed(1)} MB (${manifest.data.map((d) => d.path).join(', ')}) at ${mbps > 0 ? `${mbps} MB/s` : 'full speed'}`);
console.log(`# machine: ${os.cpus().length} cores; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const server = await startServer({ root, route });
try {
  for (let run = 1; run <= runs; run++) {
    const browser = await launch();
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      sent = null;
      const start = performance.now();
      await page.goto(server.url);
      await page.waitForSelector('[data-testid=site-verify][data-state=match], [data-testid=site-verify][data-state=differ]', { timeout: 600_000 });
      const ready = (performance.now() - start) / 1000;
      const state = await page.getByTestId('site-verify').getAttribute('data-state');
      const warnings = await page.getByTestId('integrity-warning').count();
      console.log(`run ${run}: download ${sent?.toFixed(1) ?? '?'} s, open→ready ${ready.toFixed(1)} s (${state}, ${warnings} warnings); load ${os.loadavg()[0].toFixed(2)}`);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
