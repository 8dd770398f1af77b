/** A progress bar on a terminal: what long runs (a million certificates) show while they read and replay. */
export interface Progress {
  update(done: number): void;
  finish(): void;
}

const NONE: Progress = { update: () => undefined, finish: () => undefined };
const WIDTH = 30;
const EVERY_MS = 100;

/**
 * A bar on `stream` when it is a terminal (stdout stays clean for the figures, and a pipe or a file never
 * gets carriage returns); nothing otherwise. Redrawn at most every 100 ms.
 */
export function progressBar(stream: NodeJS.WriteStream, total: number, label: string, clock: () => number = Date.now): Progress {
  if (!stream.isTTY || total <= 0) return NONE;
  let last = -Infinity;
  const draw = (done: number): void => {
    const share = Math.min(1, done / total);
    const filled = Math.round(share * WIDTH);
    stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${done}/${total}`);
  };
  return {
    update(done) {
      const now = clock();
      if (now - last < EVERY_MS) return;
      last = now;
      draw(done);
    },
    finish() {
      draw(total);
      stream.write('\n');
    },
  };
}
