import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { DerError } from '../../../core/pki/der/reader.js';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { parseCsr } from '../../../core/pki/csr/parse.js';
import { detect } from '../../../core/pki/detect.js';
import { decodeOcsp } from '../../../core/pki/ocsp/decode.js';
import { decodeOpenSsh } from '../../../core/pki/openssh/decode.js';
import { decodePkcs12 } from '../../../core/pki/pkcs12/decode.js';
import { decodePkcs7 } from '../../../core/pki/pkcs7/decode.js';
import { decodeTsp } from '../../../core/pki/tsp/decode.js';
import { parseCertificate } from '../../../core/pki/x509/parse.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';

/**
 * Mutation fuzzing of every decoder: valid objects made with openssl / ssh-keygen, mutated (bit flips,
 * byte changes, truncation, deletions, insertions, duplicated ranges, absurd lengths, deep nesting),
 * each fed to its decoder and to detect. Every case must end in a result or a 4xx problem, in bounded
 * time: never another exception (a 500 on the API), never a hang. Deterministic: a failure names its
 * seed and case number.
 */
const CASES_PER_SEED = 2_400;
const SLOW_MS = 1_000;
const SEED = 20261121;

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function makeSeeds(dir: string): Record<string, Uint8Array> {
  openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=Fuzz CA/O=Certwright', '-days', '30', '-addext', 'subjectAltName=DNS:ca.example,IP:10.0.0.1,email:ca@example.com');
  openssl(dir, 'x509', '-in', 'ca.pem', '-outform', 'DER', '-out', 'ca.der');
  openssl(dir, 'req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-outform', 'DER', '-subj', '/CN=leaf.example', '-addext', 'subjectAltName=DNS:leaf.example');
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'ca.cnf'), '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\ndefault_md=sha256\ndefault_crl_days=7\ncrlnumber=crlnumber\n');
  writeFileSync(join(dir, 'crlnumber'), '01\n');
  openssl(dir, 'ca', '-config', 'ca.cnf', '-gencrl', '-keyfile', 'ca.key', '-cert', 'ca.pem', '-out', 'ca.crl');
  openssl(dir, 'crl', '-in', 'ca.crl', '-outform', 'DER', '-out', 'crl.der');
  openssl(dir, 'pkcs12', '-export', '-in', 'ca.pem', '-inkey', 'ca.key', '-passout', 'pass:fuzz', '-iter', '64', '-maciter', '-out', 'ca.p12');
  openssl(dir, 'crl2pkcs7', '-nocrl', '-certfile', 'ca.pem', '-outform', 'DER', '-out', 'ca.p7b');
  openssl(dir, 'ocsp', '-issuer', 'ca.pem', '-serial', '0x1234', '-reqout', 'ocsp.req', '-no_nonce');
  writeFileSync(join(dir, 'data.txt'), 'certwright');
  openssl(dir, 'ts', '-query', '-data', 'data.txt', '-sha256', '-cert', '-out', 'ts.tsq');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'fuzz', '-f', join(dir, 'id')]);
  const read = (f: string) => new Uint8Array(readFileSync(join(dir, f)));
  const sshBlob = Buffer.from(readFileSync(join(dir, 'id.pub'), 'utf8').split(' ')[1]!, 'base64');
  return {
    certificate: read('ca.der'),
    csr: read('leaf.csr'),
    crl: read('crl.der'),
    pkcs12: read('ca.p12'),
    pkcs7: read('ca.p7b'),
    ocsp: read('ocsp.req'),
    tsp: read('ts.tsq'),
    openssh: new Uint8Array(sshBlob),
  };
}

const DECODERS: Record<string, (b: Uint8Array) => unknown> = {
  certificate: parseCertificate,
  csr: parseCsr,
  crl: decodeCrl,
  pkcs12: (b) => decodePkcs12(b, 'fuzz'),
  pkcs7: decodePkcs7,
  ocsp: decodeOcsp,
  tsp: decodeTsp,
  openssh: (b) => decodeOpenSsh(`ssh-ed25519 ${Buffer.from(b).toString('base64')} fuzz`),
};

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return (((x ^ (x >>> 14)) >>> 0) % n) | 0;
  };
}

function mutate(src: Uint8Array, rnd: (n: number) => number): Uint8Array {
  const b = Buffer.from(src);
  const p = rnd(b.length);
  switch (rnd(9)) {
    case 0: // flip one bit
      b[p] = b[p]! ^ (1 << rnd(8));
      return b;
    case 1: // a few random bytes
      for (let i = 0, n = 1 + rnd(4); i < n; i++) b[rnd(b.length)] = rnd(256);
      return b;
    case 2: // truncate
      return b.subarray(0, p);
    case 3: // delete a range
      return Buffer.concat([b.subarray(0, p), b.subarray(Math.min(b.length, p + 1 + rnd(16)))]);
    case 4: // insert random bytes
      return Buffer.concat([b.subarray(0, p), Buffer.from(Array.from({ length: 1 + rnd(8) }, () => rnd(256))), b.subarray(p)]);
    case 5: // duplicate a range
      return Buffer.concat([b.subarray(0, p), b.subarray(p, p + rnd(64)), b.subarray(p)]);
    case 6: // an absurd long-form length
      return Buffer.concat([b.subarray(0, p), Buffer.from([0x84, 0x7f, 0xff, 0xff, 0xff]), b.subarray(p + 1)]);
    case 7: // a length byte changed
      b[p] = [0x00, 0x7f, 0x80, 0x81, 0x82, 0xff][rnd(6)]!;
      return b;
    default: // deep nesting around the object
      return Buffer.concat([Buffer.from(Array.from({ length: 200 + rnd(3000) }, () => [0x30, 0x80]).flat()), b]);
  }
}

/** A 4xx problem or a reader error the routes turn into one: acceptable; anything else is a crash. */
const acceptable = (err: unknown): boolean =>
  (err instanceof ProblemError && err.status >= 400 && err.status < 500) || err instanceof DerError;

t.test('every decoder survives mutated input: a result or a 4xx problem, in bounded time', async (t) => {
  const seeds = makeSeeds(tempDir(t));
  const rnd = prng(SEED);
  let cases = 0;
  const crashes: string[] = [];
  let slowest = 0;
  for (const [kind, seed] of Object.entries(seeds)) {
    t.doesNotThrow(() => DECODERS[kind]!(seed), `the ${kind} seed itself decodes`);
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const input = mutate(seed, rnd);
      for (const [what, run] of [
        [kind, () => DECODERS[kind]!(input)],
        ['detect', () => detect(input)],
      ] as const) {
        const started = performance.now();
        try {
          run();
        } catch (err) {
          if (!acceptable(err) && crashes.length < 10) crashes.push(`${what} case ${kind}#${i} (seed ${SEED}): ${(err as Error)?.stack?.split('\n').slice(0, 3).join(' | ')}`);
        }
        const took = performance.now() - started;
        slowest = Math.max(slowest, took);
        if (took > SLOW_MS && crashes.length < 10) crashes.push(`${what} case ${kind}#${i} took ${took.toFixed(0)} ms`);
        cases++;
      }
    }
  }
  t.same(crashes, [], 'no decoder crashed or hung');
  t.ok(cases >= 20_000, `${cases} cases run (slowest ${slowest.toFixed(1)} ms)`);
  // The seeds from the Debian roots decode too (no mutation): the corpus the mutations start from is real.
  const roots = readdirSync('/usr/share/ca-certificates/mozilla').slice(0, 5);
  for (const f of roots) t.doesNotThrow(() => detect(readFileSync(join('/usr/share/ca-certificates/mozilla', f), 'utf8')), f);
});

t.test('the API answers mutated objects with 400 problem+json, never 500', async (t) => {
  const seeds = makeSeeds(tempDir(t));
  const kernel = await bootKernel(t);
  const rnd = prng(SEED + 1);
  const routes: [string, string, (b: Uint8Array) => unknown][] = [
    ['certificate', '/api/v1/rfc5280/x509', (b) => ({ pem: Buffer.from(b).toString('base64') })],
    ['csr', '/api/v1/rfc5280/pkcs10', (b) => ({ pem: Buffer.from(b).toString('base64') })],
    ['crl', '/api/v1/rfc5280/crl', (b) => ({ pem: Buffer.from(b).toString('base64') })],
    ['pkcs12', '/api/v1/rfc5280/pkcs12', (b) => ({ pkcs12: Buffer.from(b).toString('base64'), password: 'fuzz' })],
    ['ocsp', '/api/v1/rfc6960/', (b) => ({ data: Buffer.from(b).toString('base64') })],
    ['tsp', '/api/v1/rfc3161/', (b) => ({ data: Buffer.from(b).toString('base64') })],
    ['openssh', '/api/v1/openssh/', (b) => ({ data: `ssh-ed25519 ${Buffer.from(b).toString('base64')} fuzz` })],
    ['certificate', '/api/v1/crypto/detect', (b) => ({ data: Buffer.from(b).toString('base64') })],
  ];
  const statuses = new Map<number, number>();
  for (const [kind, url, body] of routes) {
    for (let i = 0; i < 60; i++) {
      const res = await kernel.app.inject({ method: 'POST', url, headers: { ...ADMIN_HEADERS, 'content-type': 'application/json' }, payload: body(mutate(seeds[kind]!, rnd)) as object });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode !== 200) {
        t.equal(res.statusCode, 400, `${url} case ${i}: 400, not ${res.statusCode} (${res.body.slice(0, 120)})`);
        t.equal(res.headers['content-type'], 'application/problem+json');
        t.match(res.json(), { error: /^PKI-\d{3}$/, status: 400 });
      }
    }
  }
  t.ok((statuses.get(400) ?? 0) > 100, `most mutations are refused (${JSON.stringify([...statuses])})`);
});
