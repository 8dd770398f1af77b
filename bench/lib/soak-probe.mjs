// Preloaded into the kernel the soak benchmark starts (`node --import ./bench/lib/soak-probe.mjs bin/certwright.js
// serve`): the server itself exposes nothing new. Plain JavaScript, not TypeScript: node passes its --import flags
// on to the worker threads the kernel starts, before any TypeScript loader is registered there.
// On SIGUSR2 (main thread only) it writes the process's memory figures as one JSON line to SOAK_PROBE_FILE, after
// full garbage collections when node runs with --expose-gc: two of them, as the heap pages the first frees are only
// given back to the system by the next (so heapUsed is what is still reachable, and RSS what the process keeps
// rather than what V8 has pooled since the last burst). A heap snapshot goes into
// SOAK_HEAP_SNAPSHOTS when that names a directory (to find what grows: load two in Chrome DevTools' Memory tab
// and compare them).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env.SOAK_PROBE_FILE;
const snapshots = process.env.SOAK_HEAP_SNAPSHOTS;
let n = 0;

if (file && isMainThread) {
  process.on('SIGUSR2', () => {
    const gc = globalThis.gc;
    if (typeof gc === 'function') {
      gc();
      gc();
    }
    const m = process.memoryUsage();
    const h = getHeapStatistics();
    const snapshot = snapshots ? writeHeapSnapshot(join(snapshots, `soak-${String(++n).padStart(2, '0')}.heapsnapshot`)) : undefined;
    const figures = { gc: typeof gc === 'function', rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, mallocedMemory: h.malloced_memory, snapshot };
    // Written aside, then renamed into place: the reader never sees half a line.
    writeFileSync(`${file}.tmp`, `${JSON.stringify(figures)}\n`);
    renameSync(`${file}.tmp`, file);
  });
}
