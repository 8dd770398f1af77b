import { createWriteStream, readFileSync, renameSync, rmSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { KeyObject } from 'node:crypto';
import { ed25519PublicKey } from '../integrity/signature.js';
import { BundleFormatError, verifyBundle } from './verify.js';

/** What `certwright events verify` prints and its exit code: 0 OK, 1 broken, 2 not a bundle / bad key file. */
export function verifyBundleFile(file: string, keyFile?: string): { exitCode: 0 | 1 | 2; output: string } {
  let pinned: KeyObject | undefined;
  if (keyFile !== undefined) {
    try {
      pinned = ed25519PublicKey(readFileSync(keyFile, 'utf8'));
    } catch (err) {
      return { exitCode: 2, output: `certwright: --key ${keyFile}: ${(err as Error).message}` };
    }
  }
  let bundle: unknown;
  try {
    bundle = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { exitCode: 2, output: `certwright: ${file}: ${(err as Error).message}` };
  }
  try {
    const verdict = verifyBundle(bundle, pinned);
    if (!verdict.ok) return { exitCode: 1, output: `BROKEN at seq ${verdict.broken.seq} (id ${verdict.broken.id ?? 'none'}): ${verdict.broken.reason}` };
    const trust = verdict.pinned ? 'pinned by --key' : 'the bundled key was trusted: pin a known public key with --key <file>';
    return {
      exitCode: 0,
      output: `OK: ${verdict.events} events, seq ${verdict.from}..${verdict.to}, ${verdict.checkpoints} checkpoints, key ${verdict.keys.join(', ')} (${trust})`,
    };
  } catch (err) {
    if (err instanceof BundleFormatError) return { exitCode: 2, output: `certwright: ${file}: ${err.message}` };
    throw err;
  }
}

/**
 * Where `certwright events export` writes: stdout, or a file written beside the target and renamed into
 * place once complete, so a failed export leaves no partial bundle.
 */
export function bundleOutput(out?: string): { stream: Writable; commit(): Promise<void>; abort(): Promise<void> } {
  if (out === undefined) return { stream: process.stdout, commit: async () => undefined, abort: async () => undefined };
  const partial = `${out}.partial`;
  const stream = createWriteStream(partial, { mode: 0o644 });
  // Kept here, not thrown as an unhandled 'error' event: commit() reports it, abort() does not care.
  stream.on('error', () => undefined);
  return {
    stream,
    async commit() {
      stream.end();
      await finished(stream);
      renameSync(partial, out);
    },
    async abort() {
      // The file opens asynchronously: remove it once the stream is closed, or the open would recreate it.
      if (!stream.closed) await new Promise<void>((ok) => stream.once('close', () => ok()).destroy());
      rmSync(partial, { force: true });
    },
  };
}
