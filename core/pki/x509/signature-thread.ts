/**
 * Signature checks on a worker thread. Importing a P-256 key and verifying one ECDSA signature cost about
 * 200 µs of the main thread per CSR (an enrollment's largest single piece of CPU after the database:
 * bench/enroll); handing them over costs about 30 µs, and the check then runs beside the event loop on
 * another core. node:crypto's own async verify does not help: it imports the key on the calling thread.
 *
 * One worker, started on first use and unref'd (it never keeps the process alive). When it cannot be
 * started or dies, the checks in flight and the later ones run on the calling thread instead, so an answer
 * never depends on the worker being there.
 */
import type { JsonWebKey } from 'node:crypto';
import { Worker } from 'node:worker_threads';

export interface SignatureCheck {
  digest: string | null;
  /** The key: a JWK where node imports it that way (faster), else the SPKI DER. */
  key: { jwk: JsonWebKey } | { spki: Uint8Array };
  data: Uint8Array;
  signature: Uint8Array;
  /** RSASSA-PSS salt length (PSS padding); absent for every other scheme. */
  saltLength?: number;
}

// The worker's source: plain JS (the kernel's TypeScript loader is not registered in worker threads on
// Node 20): the key imported from its JWK or DER, then verified; false for anything node cannot use.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { constants, createPublicKey, verify } = require('node:crypto');
parentPort.on('message', ({ id, check: c }) => {
  let ok = false;
  try {
    const key = c.key.jwk ? createPublicKey({ key: c.key.jwk, format: 'jwk' }) : createPublicKey({ key: Buffer.from(c.key.spki), format: 'der', type: 'spki' });
    ok = c.saltLength !== undefined
      ? verify(c.digest, c.data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: c.saltLength }, c.signature)
      : verify(c.digest, c.data, key, c.signature);
  } catch {}
  parentPort.postMessage({ id, ok });
});
`;

interface Pending {
  /** The same check on this thread, for when the worker is gone. */
  here: () => boolean;
  resolve: (ok: boolean) => void;
}

class SignatureThread {
  private worker: Worker | undefined;
  private broken = false;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  check(check: SignatureCheck, here: () => boolean): Promise<boolean> {
    const worker = this.started();
    if (!worker) return Promise.resolve(here());
    return new Promise<boolean>((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { here, resolve });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, check });
    });
  }

  /** Stops the worker; what it had not answered is checked here. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.settleHere();
    if (worker) await worker.terminate();
  }

  private started(): Worker | undefined {
    if (this.worker || this.broken) return this.worker;
    try {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.unref();
      worker.on('message', ({ id, ok }: { id: number; ok: boolean }) => {
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        if (this.pending.size === 0) worker.unref();
        p.resolve(ok === true);
      });
      const gone = (): void => {
        if (this.worker !== worker) return;
        // Dead or unstartable: the checks it held, and every later one, run on this thread.
        this.worker = undefined;
        this.broken = true;
        this.settleHere();
      };
      worker.on('error', gone);
      worker.on('exit', gone);
      this.worker = worker;
    } catch {
      this.broken = true;
    }
    return this.worker;
  }

  private settleHere(): void {
    const left = [...this.pending.values()];
    this.pending.clear();
    for (const p of left) p.resolve(p.here());
  }
}

const thread = new SignatureThread();

/** `check` on the signature worker thread; `here()` answers instead when the worker is unavailable. */
export const checkOffThread = (check: SignatureCheck, here: () => boolean): Promise<boolean> => thread.check(check, here);

/** Stops the signature worker; a later check starts it again. */
export const stopSignatureThread = (): Promise<void> => thread.stop();
