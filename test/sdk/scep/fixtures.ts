/**
 * Shared fixtures of the SCEP codec tests: RSA-2048 keys and certificates for an RA, a second RA (another
 * recipient), a client and an "issued" certificate; a CRL; and a runner for the openssl CLI in a temp dir.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { csrForScep, selfSignedForScep } from '@certwright/sdk/scep';
import { algorithm, NULL, oid, seq, set, smallInteger, time, tlv, utf8String } from '../../../sdk/src/scep/der-writer.js';

export interface Party {
  key: KeyObject;
  keyPem: string;
  pem: string;
  der: Uint8Array;
}

export function party(cn: string): Party {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = selfSignedForScep(privateKey, cn);
  return { key: privateKey, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, pem: cert.pem, der: cert.der };
}

let cached: { ra: Party; otherRa: Party; client: Party; issued: Party; csr: Uint8Array; crl: Uint8Array } | undefined;

/** Generated once per test process. */
export function fixtures() {
  if (!cached) {
    const ra = party('Certwright SCEP RA');
    const client = party('scep-client');
    cached = {
      ra,
      otherRa: party('Another RA'),
      client,
      issued: party('scep-client issued'),
      csr: csrForScep({ privateKey: client.key, cn: 'scep-client', challengePassword: 'one-time-Ch4llenge' }),
      crl: crlSignedBy(ra),
    };
  }
  return cached;
}

/** A minimal v2 CRL (RFC 5280 §5.1) signed by `issuer`, without entries. */
export function crlSignedBy(issuer: Party): Uint8Array {
  const sigAlg = algorithm('1.2.840.113549.1.1.11', NULL);
  const name = seq(set(seq(oid('2.5.4.3'), utf8String('Certwright SCEP RA'))));
  const now = Date.now();
  const tbs = seq(smallInteger(1), sigAlg, name, time(new Date(now)), time(new Date(now + 86_400_000)));
  return seq(tbs, sigAlg, tlv(0x03, [Uint8Array.of(0), sign('sha256', tbs, issuer.key)]));
}

const run = promisify(execFile);

/** A scratch directory with helpers to write files and run openssl in it. */
export async function scratch() {
  const dir = await mkdtemp(join(tmpdir(), 'scep-test-'));
  return {
    dir,
    path: (name: string) => join(dir, name),
    write: (name: string, data: Uint8Array | string) => writeFile(join(dir, name), data),
    read: async (name: string) => new Uint8Array(await readFile(join(dir, name))),
    openssl: async (...args: string[]) => {
      const { stdout, stderr } = await run('openssl', args, { cwd: dir, encoding: 'utf8', maxBuffer: 4 << 20 });
      return { stdout, stderr };
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Runs fn and returns what it threw (undefined when it did not throw). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
