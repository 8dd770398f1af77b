import fastJson from 'fast-json-stringify';
import { once } from 'node:events';
import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ProblemError } from '../../../core/errors/index.js';
import { CRL_INLINE_MAX_BYTES } from '../../../core/pki/crl/decode.js';
import { children, TAG, readTop, whole } from '../../../core/pki/der/reader.js';
import { tlv } from '../../../core/pki/der/writer.js';
import { KDF_ROUND_BUDGET } from '../../../core/pki/pkcs12/budget.js';
import { checkPkcs12Framing, decodePkcs12 } from '../../../core/pki/pkcs12/decode.js';
import { crlViewSchema } from '../../../core/pki/views/crl.js';
import { decodeNow, DecodeWorkers, isHeavy, type DecodeTask } from '../../../core/workers/index.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { rareTools, type RareTools } from '../../helpers/openssl-rare.js';
import { createPrincipal } from '../../helpers/security.js';

const PASSWORD = 'Pool-Pässwörd-24';
const AUTH = { host: 'localhost', ...ADMIN_HEADERS };

/** The leaf and CA of the fixtures, legacy / modern / RC4 PKCS#12 files, a small CRL and one above the inline limit. */
function fixtures(tools: RareTools) {
  tools.ca();
  tools.issue('leaf');
  tools.run(['pkcs12', '-export', '-legacy', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-certfile', 'ca.pem', '-name', 'Leaf', '-passout', `pass:${PASSWORD}`, '-out', 'legacy.p12']);
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-certpbe', 'AES-256-CBC', '-keypbe', 'AES-256-CBC', '-macalg', 'sha256', '-passout', `pass:${PASSWORD}`, '-out', 'modern.p12']);
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-passout', `pass:${PASSWORD}`, '-out', 'rc4.p12', '-certpbe', 'PBE-SHA1-RC4-128', '-keypbe', 'PBE-SHA1-RC4-128', '-provider', 'legacy', '-provider', 'default']);
  tools.gencrl('small.pem');
  const reasons = ['keyCompromise', 'superseded', 'cessationOfOperation', 'affiliationChanged', 'certificateHold', ''];
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const reason = reasons[i % reasons.length];
    lines.push(`R\t300101000000Z\t2401020304${String(i % 60).padStart(2, '0')}Z${reason ? `,${reason}` : ''}\t${(0x300000 + i).toString(16).toUpperCase()}\tunknown\t/CN=n${i}`);
  }
  tools.write('index.txt', `${lines.join('\n')}\n`);
  tools.gencrl('big.pem');
  const bigDer = tools.der('big.pem', 'crl');
  return { bigDer, bigPem: tools.text('big.pem'), smallPem: tools.text('small.pem') };
}

/** What /api/v1/rfc5280/pkcs12 opens in about the WorkBudget's whole KDF allowance (~0.5–1 s): MAC and PBES2 just under the caps. */
function hostileFile(tools: RareTools): Buffer {
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-iter', String(KDF_ROUND_BUDGET - 1), '-passout', `pass:${PASSWORD}`, '-out', 'hostile.p12']);
  return tools.read('hostile.p12');
}

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

function problemOf(run: () => unknown): ProblemError {
  try {
    run();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('no problem raised');
}

async function post(kernel: Kernel, url: string, contentType: string, payload: string | Buffer | object, headers: Record<string, string> = AUTH) {
  const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  return kernel.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload: body });
}
const postP12 = (kernel: Kernel, file: Buffer, headers: Record<string, string> = AUTH, password = PASSWORD) =>
  post(kernel, '/api/v1/rfc5280/pkcs12', 'application/x-pkcs12', file, { ...headers, 'x-pkcs12-password': password });

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

t.test('pooled decodes answer exactly what the inline decoders do', async (t) => {
  const tools = rareTools(t);
  const f = fixtures(tools);
  t.ok(f.bigDer.length > CRL_INLINE_MAX_BYTES, `the big CRL (${f.bigDer.length} bytes) is above the inline limit`);
  const pool = new DecodeWorkers({ size: 1, perPrincipal: 8, queue: 8, idleTimeoutMs: 5000, nice: 10 });
  t.teardown(() => pool.stop());

  const tasks: [string, DecodeTask][] = [
    ['PKCS#12 legacy (RC2, 3DES), raw DER', { kind: 'pkcs12', input: tools.read('legacy.p12'), password: PASSWORD }],
    ['PKCS#12 modern (AES, SHA-256 MAC), base64', { kind: 'pkcs12', input: tools.read('modern.p12').toString('base64'), password: PASSWORD }],
    ['CRL below the limit, PEM', { kind: 'crl', input: f.smallPem }],
    ['CRL above the limit, DER', { kind: 'crl', input: f.bigDer }],
    ['CRL above the limit, PEM', { kind: 'crl', input: f.bigPem }],
    ['detect: a CRL above the limit', { kind: 'detect', input: f.bigDer }],
    ['detect: a certificate PEM', { kind: 'detect', input: tools.text('leaf.pem') }],
    ['detect: a PKCS#12 file', { kind: 'detect', input: tools.read('modern.p12') }],
  ];
  for (const [name, task] of tasks) {
    const pooled = await pool.run(task, 'tester');
    const inline = decodeNow(task);
    t.same('json' in pooled ? JSON.parse(pooled.json.toString('utf8')) : json(pooled.value), json(inline), `${name}: the same view`);
  }
  t.ok(isHeavy(tasks[0]![1]) && isHeavy(tasks[3]![1]) && isHeavy(tasks[5]![1]), 'PKCS#12 files, and CRLs and detections above the limit, go to the pool');
  t.notOk(isHeavy(tasks[2]![1]) || isHeavy(tasks[6]![1]), 'small CRLs and detections stay inline');
  t.notOk(isHeavy({ kind: 'detect', input: { kty: 'EC' } }), 'a JWK object stays inline');
  t.ok(pool.stats().threads <= 1, 'never more threads than the pool size');

  // Large answers come back as JSON text instead of through the route's response schema: it must not matter.
  const view = decodeNow({ kind: 'crl', input: f.bigDer });
  t.same(JSON.parse(fastJson(crlViewSchema as object)(view)), json(view), 'the response schema serializes a CRL view as JSON.stringify does');
});

/** The modern file with a MAC claiming two billion iterations, and 3000 nested SEQUENCEs. */
function hostileShapes(good: Buffer): { greedy: Buffer; nested: Buffer } {
  const [version, authSafe, macData] = children(good, readTop(good, TAG.SEQUENCE, 'PFX'));
  const [digestInfo, salt] = children(good, macData!);
  const greedy = tlv(0x30, whole(good, version!), whole(good, authSafe!), tlv(0x30, whole(good, digestInfo!), whole(good, salt!), Uint8Array.of(0x02, 0x04, 0x7f, 0xff, 0xff, 0xff)));
  let nested: Uint8Array = Uint8Array.of(0x05, 0x00);
  for (let i = 0; i < 3000; i++) nested = tlv(0x30, nested);
  return { greedy: Buffer.from(greedy), nested: Buffer.from(nested) };
}

t.test('on the pool itself, hostile inputs answer the problems the inline decoders raise', async (t) => {
  const tools = rareTools(t);
  const f = fixtures(tools);
  const good = tools.read('modern.p12');
  const { greedy, nested } = hostileShapes(good);
  const pool = new DecodeWorkers({ size: 1, perPrincipal: 8, queue: 8, idleTimeoutMs: 5000, nice: 0 });
  t.teardown(() => pool.stop());
  const cases: [string, DecodeTask][] = [
    ['PKCS#12: wrong password', { kind: 'pkcs12', input: good, password: 'not-the-password' }],
    ['PKCS#12: greedy MAC iteration count', { kind: 'pkcs12', input: greedy, password: PASSWORD }],
    ['PKCS#12: truncated', { kind: 'pkcs12', input: good.subarray(0, good.length - 40), password: PASSWORD }],
    ['PKCS#12: a certificate PEM', { kind: 'pkcs12', input: tools.text('leaf.pem'), password: PASSWORD }],
    ['PKCS#12: deep nesting', { kind: 'pkcs12', input: nested, password: PASSWORD }],
    ['PKCS#12: RC4 (not offered)', { kind: 'pkcs12', input: tools.read('rc4.p12'), password: PASSWORD }],
    ['CRL: truncated', { kind: 'crl', input: f.bigDer.subarray(0, f.bigDer.length - 100) }],
    ['detect: garbage', { kind: 'detect', input: '%%% not anything %%%' }],
  ];
  for (const [name, task] of cases) {
    const inline = problemOf(() => decodeNow(task));
    const pooled = await pool.run(task, 'tester').then(
      () => undefined,
      (err: unknown) => err,
    );
    t.ok(pooled instanceof ProblemError, `${name}: a ProblemError from the pool`);
    const p = pooled as ProblemError;
    t.same([p.code, p.status, p.message, p.detail], [inline.code, inline.status, inline.message, inline.detail], `${name}: ${inline.code}, as inline`);
  }
  t.same(pool.stats(), { threads: 1, running: 0, waiting: 0, principals: 0 });

  // The framing check the routes run on the event loop raises what the full decode raises, or nothing.
  for (const [name, bytes] of [
    ['greedy', greedy],
    ['truncated', good.subarray(0, good.length - 40)],
    ['nested', nested],
    ['a certificate', tools.der('leaf.pem', 'x509')],
    ['garbage', Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 91 + 7) & 0xff))],
  ] as const) {
    const framing = problemOf(() => checkPkcs12Framing(bytes));
    const full = problemOf(() => decodePkcs12(bytes, PASSWORD));
    t.same([framing.code, framing.message, framing.detail], [full.code, full.message, full.detail], `framing check, ${name}: ${full.code} as decodePkcs12`);
  }
  for (const file of ['legacy.p12', 'modern.p12', 'rc4.p12']) t.doesNotThrow(() => checkPkcs12Framing(tools.read(file)), `framing check: ${file} passes`);
});

t.test('through the routes: the same answers; malformed files refused at once, hostile ones from the pool', async (t) => {
  const kernel = await bootKernel(t, { workers: { size: 1 } });
  const tools = rareTools(t);
  const f = fixtures(tools);
  const good = tools.read('modern.p12');
  const { greedy, nested } = hostileShapes(good);

  // Framing, kind and MAC iteration counts are checked on the event loop: no thread for them.
  const framing: [string, () => ReturnType<typeof post>, string][] = [
    ['PKCS#12: greedy MAC iteration count', () => postP12(kernel, greedy), 'PKI-004'],
    ['PKCS#12: truncated', () => postP12(kernel, good.subarray(0, good.length - 40)), 'PKI-001'],
    ['PKCS#12: a certificate', () => post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: tools.text('leaf.pem'), password: PASSWORD }), 'PKI-002'],
    ['PKCS#12: deep nesting', () => postP12(kernel, nested), 'PKI-005'],
  ];
  for (const [how, send, code] of framing) {
    const res = await send();
    t.equal(res.statusCode, 400, `${how}: 400`);
    t.match(res.json(), { error: code, status: 400 }, `${how}: ${code}`);
  }
  t.equal(kernel.workers.stats().threads, 0, 'malformed files started no thread');

  const bigCrl = await post(kernel, '/api/v1/rfc5280/crl', 'application/pkix-crl', f.bigDer);
  t.equal(bigCrl.statusCode, 200);
  t.equal(bigCrl.headers['content-type'], 'application/json', 'exactly application/json, as the inline answers');
  t.same(bigCrl.json(), json(decodeNow({ kind: 'crl', input: f.bigDer })), 'a CRL above the limit: the inline view');
  t.equal(kernel.workers.stats().threads, 1, 'it was decoded on the pool');
  const detected = await post(kernel, '/api/v1/crypto/detect', 'application/json', { data: f.bigPem });
  t.equal(detected.statusCode, 200);
  t.same(detected.json(), json(decodeNow({ kind: 'detect', input: f.bigPem })), 'detect of a CRL above the limit: the inline view');
  const small = await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { crl: f.smallPem });
  t.same(small.json(), json(decodeNow({ kind: 'crl', input: f.smallPem })), 'a small CRL, inline, as before');
  const opened = await postP12(kernel, tools.read('legacy.p12'));
  t.equal(opened.statusCode, 200);
  t.same(opened.json(), json(decodeNow({ kind: 'pkcs12', input: tools.read('legacy.p12'), password: PASSWORD })), 'a PKCS#12 file: the inline view');

  const cases: [string, () => ReturnType<typeof post>, string][] = [
    ['PKCS#12: wrong password', () => postP12(kernel, good, AUTH, 'not-the-password'), 'PKI-003'],
    ['PKCS#12: RC4 (not offered)', () => postP12(kernel, tools.read('rc4.p12')), 'PKI-006'],
    ['PKCS#12: wrong password, base64 in JSON', () => post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: good.toString('base64'), password: 'nope' }), 'PKI-003'],
    ['CRL above the limit, truncated', () => post(kernel, '/api/v1/rfc5280/crl', 'application/pkix-crl', f.bigDer.subarray(0, f.bigDer.length - 100)), 'PKI-001'],
    ['CRL above the limit, a PEM of another kind', () => post(kernel, '/api/v1/rfc5280/crl', 'text/plain', f.bigPem.replace(/X509 CRL/g, 'CERTIFICATE REQUEST')), 'PKI-002'],
  ];
  for (const [how, send, code] of cases) {
    const res = await send();
    t.equal(res.statusCode, 400, `${how}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${how}: problem+json`);
    t.match(res.json(), { error: code, status: 400 }, `${how}: ${code}`);
    t.notOk(res.body.includes(PASSWORD), `${how}: the password is not echoed`);
  }
  t.same(kernel.workers.stats(), { threads: 1, running: 0, waiting: 0, principals: 0 }, 'one thread, nothing left in flight');
});

t.test('a full pool answers 429 to the principal over its limit and 503 to everyone when the queue is full; others still get through', async (t) => {
  const kernel = await bootKernel(t, { workers: { size: 1, perPrincipal: 1, queue: 1 } });
  const tools = rareTools(t);
  fixtures(tools);
  const hostile = hostileFile(tools);
  const second = await createPrincipal(kernel, 'second-decoder');
  const third = await createPrincipal(kernel, 'third-decoder');
  const inFlight = () => kernel.workers.stats().running + kernel.workers.stats().waiting;

  const first = postP12(kernel, hostile);
  await until('the first decode to be admitted', () => inFlight() === 1);

  const again = await postP12(kernel, hostile);
  t.equal(again.statusCode, 429, 'the same principal, over its limit: 429');
  t.equal(again.headers['content-type'], 'application/problem+json');
  t.match(again.json(), { error: 'SRV-004', status: 429, title: 'Too many decodes' });
  t.ok(Number(again.headers['retry-after']) >= 1, `Retry-After: ${again.headers['retry-after']}`);

  const other = postP12(kernel, hostile, { host: 'localhost', ...second.headers });
  await until('the other principal to be admitted', () => inFlight() === 2);

  const full = await postP12(kernel, hostile, { host: 'localhost', ...third.headers });
  t.equal(full.statusCode, 503, 'a third principal while one runs and one waits (size 1, queue 1): 503');
  t.match(full.json(), { error: 'SRV-003', status: 503, title: 'Busy' });
  t.ok(Number(full.headers['retry-after']) >= 1, `Retry-After: ${full.headers['retry-after']}`);

  // The event loop is free meanwhile: decodes run on the pool's thread.
  const started = performance.now();
  const health = await kernel.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost' } });
  t.equal(health.statusCode, 200);
  t.ok(performance.now() - started < 250, `/healthz answers at once while two hostile files are decoded (${Math.round(performance.now() - started)} ms)`);

  for (const [who, res] of [['the first principal', await first], ['the other principal', await other]] as const) {
    t.equal(res.statusCode, 200, `${who}: 200 ${res.statusCode === 200 ? '' : res.body}`);
    t.equal((res.json() as { certificates: unknown[] }).certificates.length, 1, `${who}: its file opened`);
  }
  t.same(kernel.workers.stats(), { threads: 1, running: 0, waiting: 0, principals: 0 }, 'the limits are released once answered');
  t.equal((await postP12(kernel, tools.read('modern.p12'))).statusCode, 200, 'the first principal decodes again');
});

t.test('the kernel stop terminates the pool: no thread outlives it; idle threads exit by themselves', async (t) => {
  const kernel = await bootKernel(t, { workers: { size: 2, idleTimeoutMs: 300 } });
  const tools = rareTools(t);
  fixtures(tools);
  const modern = tools.read('modern.p12');
  t.equal(kernel.workers.stats().threads, 0, 'no thread before the first heavy decode');
  for (let i = 0; i < 3; i++) t.equal((await postP12(kernel, modern)).statusCode, 200);
  t.ok(kernel.workers.stats().threads >= 1 && kernel.workers.stats().threads <= 2, 'threads started on demand, within the size');
  await until('idle threads to exit', () => kernel.workers.stats().threads === 0, 10_000);
  t.pass('idle threads exited after idleTimeoutMs');
  t.equal((await postP12(kernel, modern)).statusCode, 200, 'a later decode starts a thread again');
  // What listen() does before the first decode: one thread kept ready.
  const warm = new DecodeWorkers({ size: 2, perPrincipal: 2, queue: 2, idleTimeoutMs: 300, nice: 10 });
  warm.warm();
  await until('the warm thread', () => warm.stats().threads === 1, 10_000);
  await new Promise((r) => setTimeout(r, 700));
  t.equal(warm.stats().threads, 1, 'a warm thread stays past idleTimeoutMs');
  await warm.stop();
  t.equal(warm.stats().threads, 0);

  const [a, b] = await Promise.all([postP12(kernel, modern), postP12(kernel, tools.read('legacy.p12'))]);
  t.equal(a.statusCode, 200);
  t.equal(b.statusCode, 200);
  const threads = kernel.workers.workerThreads();
  t.ok(threads.length >= 1, `${threads.length} live thread(s) before the stop`);
  const exited = Promise.all(threads.map((w) => once(w, 'exit')));
  await kernel.stop();
  await exited;
  t.pass('every thread exited with the kernel stop');
  t.equal(kernel.workers.stats().threads, 0, 'none left');
  const after = await kernel.workers.run({ kind: 'pkcs12', input: modern, password: PASSWORD }, 'late').then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(after instanceof ProblemError && after.code === 'HTTP-007', 'a decode after the stop is refused (HTTP-007), no thread started');
  t.equal(kernel.workers.workerThreads().length, 0);
});
