/**
 * A test daemon (named, knotd…) run in the foreground: started with its output watched until it says it is
 * ready, stopped by its PID at teardown. One place for what each daemon helper would otherwise repeat.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from './kernel.js';

export async function startDaemon(t: TestContext, name: string, command: string, args: string[], ready: (log: string) => boolean, timeoutMs = 15_000): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${log}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (ready(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${log}`));
    });
  });
  // Keep draining its output (a full pipe would block it), without keeping the log.
  child.stderr!.removeAllListeners('data').resume();
  child.stdout!.removeAllListeners('data').resume();
  child.removeAllListeners('exit');
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid!, 'SIGTERM');
      }),
  );
  return child;
}
