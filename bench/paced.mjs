// What the browser benchmarks that serve data at a set rate share: their `--name value` options
// and the paced body (bench/data-link.mjs, bench/site-open.mjs).

import { performance } from 'node:perf_hooks';

const PIECE = 64 << 10;

/** `--name value` from the command line, else `dflt`. */
export function option(name, dflt) {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
}

/** Sends `body` with its Content-Length in 64 KiB pieces at `mbps` MB/s (0: as fast as it
 * goes); resolves to the seconds the sending took. */
export async function sendPaced(res, body, mbps) {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, 'Cache-Control': 'no-store' });
  const start = performance.now();
  for (let at = 0; at < body.length; at += PIECE) {
    const piece = body.subarray(at, Math.min(at + PIECE, body.length));
    if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
    if (mbps > 0) {
      const wait = start + ((at + piece.length) / (mbps * 1e6)) * 1000 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
  res.end();
  return (performance.now() - start) / 1000;
}
