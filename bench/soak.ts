// `npm run bench -- soak`: does the server's memory stay bounded under a long mix of valid and hostile requests?
//
// Starts the kernel as a child process (`node bin/certwright.js serve`, SQLite in a fresh temp data dir, or MariaDB
// with SOAK_DB=mariadb: a fresh database on 127.0.0.1:3306 as root, dropped at the end; LOG_LEVEL=warn; behind a
// trusted proxy — server.trustProxy true — so X-Forwarded-For gives every failed login its own client address, as
// in production behind a load balancer), then sends SOAK_N requests (200,000 by default) over CONCURRENCY keep-alive
// sockets, cycling a fixed, seeded mix (SOAK_SEED):
//   valid searches of certificates, requests and events, with many distinct query texts, label.<key> and
//   metadata.<key> field names, regular expressions, `in` lists, sort elements and projections; long distinct
//   queries (`in` lists of 500 to 6,000 values, `or` chains of 50 to 400 terms); malformed queries
//   (syntax errors, unknown field names, nesting past the limit, bad regexes, bad dates); the decoders (x509,
//   pkcs10, crl, crypto/detect, openssh, rfc3161, rfc6960) with valid and garbage PEM, DER, JSON and multipart
//   bodies; JSON bodies with unknown fields, wrong types, broken syntax or over the body limit; bad URLs (%FF, bad
//   UTF-8, overlong); wrong Host headers; failed logins (API key and Basic) from distinct identifiers and addresses;
//   unknown routes with random paths; an authorization matrix over every route of the OpenAPI document (no
//   credentials, a forged session cookie, a wrong key, an account without permissions, the administrator on GETs);
//   logins that open sessions; a WebRA enrollment now and then.
// Every SOAK_EVERY requests (20,000) the load pauses (in-flight requests drained, SOAK_SETTLE_MS of quiet, 1 s), the
// kernel — which runs with --expose-gc and bench/lib/soak-probe.mjs preloaded: the server exposes nothing new — runs
// two full GCs (the second gives back the heap pages the first freed) and reports its heap; then the
// kernel's RSS and peak RSS are read from /proc/<pid>/status, and where the resident memory is from
// /proc/<pid>/smaps. Goal: after the first BASELINE_AT requests (40,000: warm-up, JIT, caches filling up) RSS stays
// within LIMIT_MB (64 MB) of its figure at BASELINE_AT. SOAK_GC=0 samples without the collection (RSS as is,
// noisier: what V8 keeps committed after the last burst counts); SOAK_HEAP_SNAPSHOTS=<dir> writes a heap snapshot
// at each sample (slow: seconds each, and it grows the process while it writes); SOAK_ONLY=<words,…> sends only the
// kinds of request whose names contain one of the words (to find which input grows what).
// Exit code 0 even when the goal FAILs (1 only when the benchmark itself cannot run).
import knexFactory, { type Knex } from 'knex';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCsr } from '../core/pki/csr/build.js';
import { toPem } from '../core/pki/input.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { cleanEnv, freePort, get, LOOPBACK, ServerProcess, waitUntilAnswering } from './lib/servers.js';

const N = Number(process.env.SOAK_N ?? 200_000);
const EVERY = Number(process.env.SOAK_EVERY ?? 20_000);
const BASELINE_AT = 40_000;
const LIMIT_MB = 64;
const CONCURRENCY = 24;
/** Quiet before each sample, after the in-flight requests are answered (8,000 or more also lets V8's memory reducer run). */
const SETTLE_MS = Number(process.env.SOAK_SETTLE_MS ?? 1_000);
const SEED = Number(process.env.SOAK_SEED ?? 24);
const GC = process.env.SOAK_GC !== '0';
const ENGINE = process.env.SOAK_DB === 'mariadb' ? 'mariadb' : 'sqlite';
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
const USER = { id: 'soak-user', secret: 'Soak-User-Secret-1!' };
const REQUEST_TIMEOUT_MS = 60_000;
const BOOTSTRAP_TIMEOUT_MS = 30_000;
const MB = 1024 * 1024;

// ---------------------------------------------------------------- randomness (seeded: runs compare)

let state = SEED >>> 0;
/** mulberry32 */
function rand(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n: number): number => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const word = (min = 4, max = 12): string => Array.from({ length: min + int(max - min + 1) }, () => ALNUM[int(ALNUM.length)]).join('');
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => int(256)));
const junk = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(32 + int(95))).join('');
const ip = (): string => `10.${int(256)}.${int(256)}.${1 + int(254)}`;
/**
 * A client address for a failed login: half are new each time (every one a new throttle counter, and an argon2id
 * verification the server cannot skip), half come from 64 addresses that fail often enough to be locked (429).
 */
const loginAddress = (): string => (int(2) ? ip() : `192.0.2.${int(64)}`);

// ---------------------------------------------------------------- the mix

interface Shot {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

interface Kind {
  name: string;
  weight: number;
  /** Statuses other than these are counted as unexpected (a valid search answering 400 means a broken mix). */
  expect?: (status: number) => boolean;
  make: () => Shot;
}

interface Material {
  certDer: Buffer;
  certPem: string;
  crlDer: Buffer;
  csrPem: string;
  routes: { method: string; path: string }[];
  userCookie: () => string;
}

const admin = { 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET };
const user = { 'x-api-id': USER.id, 'x-api-key': USER.secret };
const json = (value: unknown): { headers: Record<string, string>; body: string } => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const searchBody = (query: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ query, pageIndex: 1 + int(3), pageSize: 1 + int(50), ...extra });
const search = (path: string, query: string, extra: Record<string, unknown> = {}): Shot => ({
  method: 'POST',
  path,
  headers: { ...admin, 'content-type': 'application/json' },
  body: searchBody(query, extra),
});
const q = (s: string): string => JSON.stringify(s);
const ok = (s: number): boolean => s >= 200 && s < 300;
const clientError = (s: number): boolean => s >= 400 && s < 500;

const CERT_SORT = ['dn', 'issuer', 'serial', 'profile', 'module', 'valid.from', 'valid.until', 'id'];
const CERT_FIELDS = ['dn', 'issuer', 'serial', 'notBefore', 'notAfter', 'labels', 'metadata', 'subjectAlternateNames', 'keyType', 'thumbprint'];

function certificateQuery(): string {
  const r = word();
  switch (int(12)) {
    case 0: return `dn contains ${q(r)}`;
    case 1: return `label.${word(3, 20)} equals ${q(r)}`;
    case 2: return `metadata.${word(3, 20)} equals ${q(r)}`;
    case 3: return `dn matches ${q(`${r}.*[0-9]{${1 + int(5)}}`)}`;
    case 4: return `serial in [${Array.from({ length: 1 + int(40) }, () => q(randomHex(16))).join(', ')}]`;
    case 5: return `(dn contains ${q(r)} or issuer equals ${q(word())}) and not profile equals ${q(word())}`;
    case 6: return `valid.until before ${1 + int(400)}d and valid.from after -${1 + int(400)}d`;
    case 7: return `status is ${pick(['valid', 'expired', 'revoked', 'not valid'])}`;
    case 8: return `san equals ${q(`${r}.example.com`)} or san contains ${q(word())}`;
    case 9: return `discoverydata.tlsport equals ${int(65536)}`;
    case 10: return `keytype in [${q(pick(['rsa-2048', 'ec-secp256r1', 'ed-25519']))}] and label.${word(3, 8)} exists`;
    default: return `owner equals ${q(r)} or team equals ${q(r)} or contactemail contains ${q(`${r}@`)}`;
  }
}

function requestQuery(): string {
  const r = word();
  switch (int(6)) {
    case 0: return `status equals ${q(pick(['completed', 'pending', 'denied', 'canceled']))}`;
    case 1: return `profile equals ${q(r)} and workflow equals ${q(pick(['enroll', 'renew', 'revoke']))}`;
    case 2: return `label.${word(3, 20)} equals ${q(r)}`;
    case 3: return `registration.date after -${1 + int(90)}d`;
    case 4: return `requester matches ${q(`^${r}`)}`;
    default: return `dn contains ${q(r)} or metadata.${word(3, 12)} equals ${q(r)}`;
  }
}

function eventQuery(): string {
  const r = word();
  switch (int(5)) {
    case 0: return `code equals ${q(pick(['SEC-LOGIN-FAILURE', 'REQUEST-COMPLETED', r.toUpperCase()]))}`;
    case 1: return `principal equals ${q(r)}`;
    case 2: return `detail.${word(3, 16)} contains ${q(r)}`;
    case 3: return `timestamp after -${1 + int(60)}m and module in [${q('security')}, ${q(r)}]`;
    default: return `object.id equals ${q(randomHex(24))} or code matches ${q(`^${r.toUpperCase()}`)}`;
  }
}

function malformedQuery(): string {
  const r = word();
  switch (int(10)) {
    case 0: return junk(1 + int(200));
    case 1: return `dn equals "${r}`; // unterminated string
    case 2: return `(dn equals ${q(r)}`;
    case 3: return `${word(3, 30)}.${word(2, 10)} equals ${q(r)}`; // unknown field, a distinct name each time
    case 4: return `${'('.repeat(65 + int(100))}dn equals "a"${')'.repeat(65)}`;
    case 5: return `dn matches ${q(`(${r}`)}`; // bad regex
    case 6: return `valid.until before ${q(r)}`;
    case 7: return `dn ${word()} ${q(r)}`; // unknown operator
    case 8: return `status is ${r}`; // unknown special value
    default: return `dn in [${q(r)}, ]`;
  }
}

/** Long texts, distinct each time: big `in` lists (one bound parameter each) and long `or` chains. */
function largeQuery(field: string): string {
  if (int(2)) return `${field} in [${Array.from({ length: 500 + int(5500) }, () => q(randomHex(12))).join(',')}]`;
  return Array.from({ length: 50 + int(350) }, () => `${field} equals ${q(word(6, 16))}`).join(' or ');
}

function randomHex(n: number): string {
  return Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
}

function multipart(part: string, content: Buffer | string, type = 'application/octet-stream'): { headers: Record<string, string>; body: Buffer } {
  const boundary = `----soak${word(8, 16)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part}"; filename="${word()}.bin"\r\nContent-Type: ${type}\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
}

const DECODERS = ['/api/v1/rfc5280/x509', '/api/v1/rfc5280/pkcs10', '/api/v1/rfc5280/crl', '/api/v1/crypto/detect', '/api/v1/openssh/', '/api/v1/rfc3161/', '/api/v1/rfc6960/', '/api/v1/rfc5280/tc'];

function kinds(m: Material): Kind[] {
  const fill = (template: string): string =>
    template.replace(/\{\*\}/g, () => `${word()}/${word()}`).replace(/\{[^}]+\}/g, () => (int(3) === 0 ? randomHex(24) : word(3, 30)));
  let enrolled = 0;
  return [
    { name: 'search certificates', weight: 12, expect: ok, make: () => search('/api/v1/certificates/search', certificateQuery(), int(2) ? { sortedBy: [{ element: pick(CERT_SORT), order: pick(['Asc', 'Desc']) }] } : { fields: CERT_FIELDS.filter(() => int(2) === 0), withCount: int(2) === 0 }) },
    { name: 'search requests', weight: 5, expect: ok, make: () => search('/api/v1/requests/search', requestQuery()) },
    { name: 'search events', weight: 5, expect: ok, make: () => search('/api/v1/events/search', eventQuery()) },
    { name: 'aggregate certificates', weight: 1, expect: ok, make: () => ({ ...search('/api/v1/certificates/aggregate', certificateQuery()), body: JSON.stringify({ query: certificateQuery(), groupBy: [pick(['issuer', 'profile', 'module'])] }) }) },
    {
      name: 'large queries',
      weight: 1,
      expect: ok,
      make: () => {
        const [path, field] = pick([['/api/v1/certificates/search', 'serial'], ['/api/v1/requests/search', 'dn'], ['/api/v1/events/search', 'principal']] as const);
        return search(path, largeQuery(field));
      },
    },
    { name: 'malformed queries', weight: 8, expect: clientError, make: () => search(pick(['/api/v1/certificates/search', '/api/v1/requests/search', '/api/v1/events/search', '/api/v1/certificates/aggregate']), malformedQuery()) },
    {
      name: 'decoders, valid input',
      weight: 4,
      expect: ok,
      make: () => {
        switch (int(6)) {
          case 0: return { method: 'POST', path: '/api/v1/rfc5280/x509', headers: { ...admin, 'content-type': 'application/pkix-cert' }, body: m.certDer };
          case 1: { const b = multipart('x509', m.certDer); return { method: 'POST', path: '/api/v1/rfc5280/x509', headers: { ...admin, ...b.headers }, body: b.body }; }
          case 2: return { method: 'POST', path: '/api/v1/rfc5280/x509', headers: { ...admin, ...json({ pem: m.certPem }).headers }, body: json({ pem: m.certPem }).body };
          case 3: return { method: 'POST', path: '/api/v1/rfc5280/pkcs10', headers: { ...admin, ...json({ pem: m.csrPem }).headers }, body: json({ pem: m.csrPem }).body };
          case 4: return { method: 'POST', path: '/api/v1/rfc5280/crl', headers: { ...admin, 'content-type': 'application/pkix-crl' }, body: m.crlDer };
          default: return { method: 'GET', path: `/api/v1/rfc5280/x509/${encodeURIComponent(m.certPem)}`, headers: admin };
        }
      },
    },
    {
      name: 'decoders, garbage input',
      weight: 7,
      expect: (s) => clientError(s) || ok(s),
      make: () => {
        const path = pick(DECODERS);
        switch (int(8)) {
          case 0: return { method: 'POST', path, headers: { ...admin, 'content-type': 'application/octet-stream' }, body: bytes(1 + int(4000)) };
          case 1: return { method: 'POST', path, headers: { ...admin, 'content-type': 'application/x-pem-file' }, body: `-----BEGIN CERTIFICATE-----\n${bytes(64 + int(2000)).toString('base64')}\n-----END CERTIFICATE-----\n` };
          case 2: { const b = multipart(pick(['x509', 'pkcs10', 'crl', 'file', word()]), bytes(1 + int(3000))); return { method: 'POST', path, headers: { ...admin, ...b.headers }, body: b.body }; }
          case 3: return { method: 'POST', path, headers: { ...admin, 'content-type': `multipart/form-data; boundary=${word()}` }, body: junk(1 + int(500)) };
          case 4: return { method: 'GET', path: `${path.replace(/\/$/, '')}/${encodeURIComponent(bytes(10 + int(600)).toString('base64'))}`, headers: admin };
          case 5: { const b = json({ pem: junk(int(3000)), [word()]: word() }); return { method: 'POST', path, headers: { ...admin, ...b.headers }, body: b.body }; }
          case 6: { const der = Buffer.from(m.certDer); const at = 10 + int(der.length - 10); der[at] = der[at]! ^ 0xff; return { method: 'POST', path: '/api/v1/rfc5280/x509', headers: { ...admin, 'content-type': 'application/pkix-cert' }, body: der }; }
          default: return { method: 'POST', path, headers: { ...admin, 'content-type': `application/${word()}` }, body: bytes(1 + int(300)) };
        }
      },
    },
    {
      name: 'bad JSON bodies',
      weight: 6,
      // Search bodies tolerate unknown fields and take null for "everything" (client compat): 200 is right there.
      expect: (s) => s < 500,
      make: () => {
        const path = pick(['/api/v1/certificates/search', '/api/v1/requests/submit', '/api/v1/security/principals/queries', '/api/v1/security/identity/locals/', '/api/v1/certificate/labels/', '/api/v1/requests/search', '/api/v1/triggers/', '/api/v1/pki/queues/']);
        const headers = { ...admin, 'content-type': 'application/json' };
        switch (int(7)) {
          case 0: return { method: 'POST', path, headers, body: JSON.stringify({ [word()]: word(), [word()]: int(1000), query: int(5) }) };
          case 1: return { method: 'POST', path, headers, body: JSON.stringify({ query: { [word()]: [word()] }, pageIndex: word(), pageSize: [int(9)], sortedBy: word() }) };
          case 2: return { method: 'POST', path, headers, body: `{"query": "${word()}", ${junk(int(100))}` };
          case 3: return { method: 'POST', path, headers, body: `${'['.repeat(1000 + int(5000))}1` };
          case 4: return { method: 'POST', path, headers, body: JSON.stringify(Object.fromEntries(Array.from({ length: 50 + int(500) }, () => [word(4, 30), word()]))) };
          // Over the 1 MiB body limit (rarely: each is a megabyte on the wire).
          case 5: return int(20) === 0 ? { method: 'POST', path, headers, body: `{"query":"${'a'.repeat(1_100_000)}"}` } : { method: 'POST', path, headers, body: 'null' };
          default: return { method: pick(['PUT', 'POST', 'PATCH']), path, headers: { ...admin, 'content-type': pick(['text/xml', 'application/x-www-form-urlencoded', `application/${word()}+json`]) }, body: junk(int(500)) };
        }
      },
    },
    {
      name: 'bad URLs',
      weight: 3,
      expect: clientError,
      make: () => {
        const bad = pick(['%FF', '%E0%A4%A', '%C0%AF', '%00', '%', `%${word(2, 2)}`, '%ED%A0%80']);
        switch (int(4)) {
          case 0: return { method: 'GET', path: `/api/v1/certificates/${bad}${word()}`, headers: admin };
          case 1: return { method: 'GET', path: `/api/v1/rfc5280/x509/${bad}${word()}`, headers: admin };
          case 2: return { method: 'GET', path: `/${word()}${bad}/${word()}?${word()}=${bad}`, headers: admin };
          default: return { method: 'GET', path: `/api/v1/certificate/profiles/${'x'.repeat(16_385 + int(2000))}`, headers: admin };
        }
      },
    },
    {
      name: 'wrong Host headers',
      weight: 3,
      expect: (s) => s === 404 || clientError(s),
      make: () => ({ method: 'GET', path: pick(['/api/v1/certificates/search/dictionary', '/api/v1/endpoints/', '/api/v1/security/principals/self']), headers: { ...admin, host: pick([`${word()}.example.com`, `${word()}:${int(70000)}`, `[${randomHex(4)}::${randomHex(4)}]:${int(9999)}`, `${ip()}`, junk(1 + int(60)).replace(/[^\x21-\x7e]/g, 'x')]) } }),
    },
    {
      // Each costs an argon2id verification (~30 ms of CPU) unless its address is locked: a few percent of the mix
      // would saturate 2 cores with hashing and starve everything else of CPU.
      name: 'failed logins',
      weight: 1.5,
      expect: (s) => s === 401 || s === 429,
      make: () => {
        const id = int(4) === 0 ? 'administrator' : `${word()}@${word()}.example`;
        const from = { 'x-forwarded-for': loginAddress() };
        if (int(3) === 0) return { method: 'GET', path: '/api/v1/security/principals/self', headers: { ...from, authorization: `Basic ${Buffer.from(`${id}:${word(12, 20)}`).toString('base64')}` } };
        return { method: 'GET', path: pick(['/api/v1/security/principals/self', '/api/v1/security/principals/authenticate', '/api/v1/certificates/search/dictionary']), headers: { ...from, 'x-api-id': id, 'x-api-key': word(12, 24) } };
      },
    },
    {
      name: 'unknown routes',
      weight: 4,
      expect: (s) => s === 404 || s === 405 || clientError(s),
      make: () => ({ method: pick(['GET', 'POST', 'DELETE', 'PUT', 'OPTIONS', 'HEAD']), path: `/${pick(['api/v1', 'api/v2', 'pki', word()])}/${Array.from({ length: 1 + int(6) }, () => word(1, 20)).join('/')}${int(3) === 0 ? `?${word()}=${word()}` : ''}`, headers: int(2) ? admin : {} }),
    },
    {
      name: 'authorization matrix',
      weight: 12,
      make: () => {
        const route = pick(m.routes);
        const path = fill(route.path);
        const who = int(5);
        if (who === 4 && route.method === 'GET' && !/\/run\b/.test(route.path)) return { method: 'GET', path, headers: admin };
        const headers: Record<string, string> =
          who === 0 ? {} : who === 1 ? { cookie: `PLAY_SESSION=${randomBytes(24).toString('base64url')}.${word()}` } : who === 2 ? { 'x-api-id': USER.id, 'x-api-key': word(12, 20), 'x-forwarded-for': `192.0.2.${64 + int(64)}` } : user;
        return route.method === 'GET' || route.method === 'DELETE'
          ? { method: route.method, path, headers }
          : { method: route.method, path, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ [word()]: word() }) };
      },
    },
    {
      name: 'sessions (login, then a call)',
      weight: 1,
      expect: ok,
      make: () => (int(2) ? { method: 'GET', path: '/api/v1/security/principals/authenticate', headers: user } : { method: 'GET', path: '/api/v1/security/principals/self', headers: { cookie: m.userCookie() } }),
    },
    {
      name: 'WebRA enrollments',
      weight: 0.2,
      expect: ok,
      make: () => {
        const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
        const cn = `soak-${SEED}-${++enrolled}-${word()}.bench.example.com`;
        const csr = toPem(buildCsr(privateKey, { subject: `CN=${cn}`, sans: [{ sanType: 'DNSNAME', value: cn }] }), 'CERTIFICATE REQUEST');
        const body = { module: 'webra', workflow: 'enroll', profile: 'default', template: { csr, subject: [{ element: 'cn.1', value: cn }], sans: [{ type: 'DNSNAME', value: [cn] }] } };
        return { method: 'POST', path: '/api/v1/requests/submit', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify(body) };
      },
    },
    { name: 'probes and small reads', weight: 2, expect: ok, make: () => ({ method: 'GET', path: pick(['/healthz', '/readyz', '/api/v1/endpoints/', '/api/v1/licenses', '/api/v1/security/principals/self']), headers: admin }) },
  ];
}

// ---------------------------------------------------------------- HTTP

interface Answer {
  status: number;
  setCookie: string[];
  /** The body, when asked for (keepBody). */
  body: Buffer;
}

/**
 * One request. A keep-alive socket the server has just closed (after a 431 or a 413 on another request) fails the
 * next request sent on it: such a failure is retried once on a fresh connection, so only requests the server itself
 * refuses to answer count as "closed" (status 0).
 */
async function send(agent: Agent | false, port: number, shot: Shot, keepBody = false): Promise<Answer> {
  const answer = await sendOnce(agent, port, shot, keepBody);
  return answer.status === 0 && agent ? sendOnce(false, port, shot, keepBody) : answer;
}

function sendOnce(agent: Agent | false, port: number, shot: Shot, keepBody: boolean): Promise<Answer> {
  return new Promise((resolveSend) => {
    const body = shot.body === undefined ? undefined : typeof shot.body === 'string' ? Buffer.from(shot.body) : shot.body;
    const headers: Record<string, string | number> = { host: 'localhost', ...shot.headers };
    if (body) headers['content-length'] = body.length;
    let req;
    try {
      req = request({ agent, host: LOOPBACK, port, path: shot.path, method: shot.method, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (keepBody) chunks.push(c);
        });
        res.on('end', () => resolveSend({ status: res.statusCode ?? 0, setCookie: ([] as string[]).concat(res.headers['set-cookie'] ?? []), body: Buffer.concat(chunks) }));
        res.on('error', () => resolveSend({ status: 0, setCookie: [], body: Buffer.alloc(0) }));
      });
    } catch {
      // A path node's client refuses to send (invalid characters): not the server's doing.
      resolveSend({ status: -1, setCookie: [], body: Buffer.alloc(0) });
      return;
    }
    req.on('timeout', () => req.destroy(new Error('timeout')));
    // A connection the server closed (an over-limit body answered 413 while still being sent): status 0.
    req.on('error', () => resolveSend({ status: 0, setCookie: [], body: Buffer.alloc(0) }));
    req.end(body);
  });
}

// ---------------------------------------------------------------- the kernel

interface Kernel {
  server: ServerProcess;
  port: number;
  dataDir: string;
  probeFile: string;
  cleanup: () => Promise<void>;
}

async function mariadbDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminKnex: Knex = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  const name = `certwright_bench_soak_${randomBytes(4).toString('hex')}`;
  try {
    await adminKnex.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
  } catch (err) {
    await adminKnex.destroy().catch(() => undefined);
    throw new Error(`MariaDB unreachable at ${MARIADB.host}:${MARIADB.port} (${(err as Error).message})`);
  }
  return {
    url: `mysql://${MARIADB.user}@${MARIADB.host}:${MARIADB.port}/${name}`,
    drop: async () => {
      await adminKnex.raw('DROP DATABASE IF EXISTS ??', [name]).catch(() => undefined);
      await adminKnex.destroy();
    },
  };
}

async function startKernel(): Promise<Kernel> {
  const dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-soak-'));
  const probeFile = join(dataDir, 'soak-probe.json');
  const configFile = join(dataDir, 'soak.yaml');
  writeFileSync(configFile, 'server:\n  trustProxy: true\n');
  const mariadb = ENGINE === 'mariadb' ? await mariadbDatabase() : null;
  const port = await freePort();
  const snapshots = process.env.SOAK_HEAP_SNAPSHOTS;
  // BENCH_SERVER_NODE_ARGS (ServerProcess) come first; these after them.
  const args = [...(GC ? ['--expose-gc'] : []), '--import', './bench/lib/soak-probe.mjs', 'bin/certwright.js', 'serve'];
  const server = new ServerProcess('certwright kernel', args, {
    ...cleanEnv(),
    PORT: String(port),
    HOST: LOOPBACK,
    CERTWRIGHT_DATA_DIR: dataDir,
    CERTWRIGHT_ADMIN_SECRET: ADMIN_SECRET,
    CERTWRIGHT_CONFIG: configFile,
    LOG_LEVEL: 'warn',
    SOAK_PROBE_FILE: probeFile,
    ...(snapshots ? { SOAK_HEAP_SNAPSHOTS: snapshots } : {}),
    ...(mariadb ? { DATABASE_URL: mariadb.url } : {}),
  });
  const cleanup = async (): Promise<void> => {
    await server.stop();
    await mariadb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { server, port, dataDir, probeFile, cleanup };
}

interface Sample {
  at: number;
  resident?: { brk: number; anon: number; files: number };
  /** SQLite: the database file's size (its page cache, up to 64 MiB, fills as it grows). */
  dbFile?: number;
  rss: number;
  peak: number;
  heapUsed?: number;
  heapTotal?: number;
  external?: number;
  rate?: number;
}

/**
 * Where the resident memory is (Linux /proc/<pid>/smaps): the malloc main arena ([heap]: SQLite's page cache and
 * statements, node's buffers), other anonymous mappings (the V8 heaps of every thread, thread malloc arenas,
 * stacks) and file mappings (code, libraries, SQLite's -shm). Undefined when smaps cannot be read.
 */
function residentBy(pid: number): { brk: number; anon: number; files: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const out = { brk: 0, anon: 0, files: 0 };
  let kind: keyof typeof out = 'anon';
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1]!;
      kind = name === '[heap]' ? 'brk' : name === '' || name.startsWith('[anon') || name === '[stack]' ? 'anon' : 'files';
      continue;
    }
    if (line.startsWith('Rss:')) out[kind] += Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
  }
  return out;
}

function procStatus(pid: number): { rss: number; peak: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** The kernel's figures now: heap from the probe (after a GC unless SOAK_GC=0), then RSS from /proc. */
async function sample(kernel: Kernel, at: number): Promise<Sample> {
  const pid = kernel.server.proc.pid!;
  const before = existsSync(kernel.probeFile) ? statSync(kernel.probeFile).mtimeMs : 0;
  let heap: { heapUsed: number; heapTotal: number; external: number } | undefined;
  if (kernel.server.proc.kill('SIGUSR2')) {
    const deadline = Date.now() + (process.env.SOAK_HEAP_SNAPSHOTS ? 120_000 : 10_000);
    while (Date.now() < deadline) {
      if (existsSync(kernel.probeFile) && statSync(kernel.probeFile).mtimeMs !== before) {
        heap = JSON.parse(readFileSync(kernel.probeFile, 'utf8')) as typeof heap;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const dbPath = join(kernel.dataDir, 'certwright.db');
  const dbFile = ENGINE === 'sqlite' && existsSync(dbPath) ? statSync(dbPath).size : undefined;
  const resident = residentBy(pid);
  return { at, ...procStatus(pid), ...(resident ? { resident } : {}), ...(dbFile === undefined ? {} : { dbFile }), ...(heap ? { heapUsed: heap.heapUsed, heapTotal: heap.heapTotal, external: heap.external } : {}) };
}

const mb = (n: number | undefined, digits = 1): string => (n === undefined || Number.isNaN(n) ? 'n/a' : fmt(n / MB, digits));

function printSample(s: Sample): void {
  process.stdout.write(
    `${fmt(s.at).padStart(9)} requests  rss ${mb(s.rss).padStart(7)} MB  peak ${mb(s.peak).padStart(7)} MB  heap used ${mb(s.heapUsed).padStart(6)} MB` +
      ` of ${mb(s.heapTotal).padStart(6)} MB  outside the heap ${mb(s.heapTotal === undefined ? undefined : s.rss - s.heapTotal).padStart(6)} MB${s.dbFile === undefined ? '' : `  db ${mb(s.dbFile)} MB`}${s.rate ? `  ${fmt(s.rate)} req/s` : ''}\n` +
      (s.resident ? `${' '.repeat(19)}resident: malloc [heap] ${mb(s.resident.brk)} MB, other anonymous ${mb(s.resident.anon)} MB, files ${mb(s.resident.files)} MB\n` : ''),
  );
}

// ---------------------------------------------------------------- run

async function prepare(kernel: Kernel, agent: Agent): Promise<Material> {
  const base = `http://${LOOPBACK}:${kernel.port}`;
  await waitUntilAnswering(kernel.server, `${base}/healthz`, { host: 'localhost' });
  const deadline = Date.now() + BOOTSTRAP_TIMEOUT_MS;
  // The first start creates connector local-ca and profile default once the plugins are started.
  for (;;) {
    const profile = await get(`${base}/api/v1/certificate/profiles/default`, { host: 'localhost', ...admin });
    if (profile.status === 200) break;
    if (Date.now() > deadline || !kernel.server.running) throw new Error(`profile default not there (${profile.status}):\n${kernel.server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const fetchBytes = async (path: string): Promise<Buffer> => {
    const res = await send(agent, kernel.port, { method: 'GET', path, headers: admin }, true);
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}:\n${kernel.server.output()}`);
    return res.body;
  };
  const certDer = await fetchBytes('/pki/local-ca/ca');
  const crlDer = await fetchBytes('/pki/local-ca/crl');
  const openapi = JSON.parse((await fetchBytes('/api/v1/openapi.json')).toString('utf8')) as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(openapi.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const csrPem = toPem(buildCsr(privateKey, { subject: 'CN=soak.bench.example.com', sans: [{ sanType: 'DNSNAME', value: 'soak.bench.example.com' }] }), 'CERTIFICATE REQUEST');
  // An account without permissions: the authorization matrix calls every route as it too.
  const created = await send(agent, kernel.port, { method: 'POST', path: '/api/v1/security/identity/locals/', headers: { ...admin, ...json({ identifier: USER.id }).headers }, body: json({ identifier: USER.id }).body }, true);
  if (!ok(created.status)) throw new Error(`creating ${USER.id} answered ${created.status}: ${created.body.toString()}`);
  const password = await send(agent, kernel.port, { method: 'PATCH', path: '/api/v1/security/identity/locals/', headers: { ...admin, ...json({ identifier: USER.id, password: USER.secret }).headers }, body: json({ identifier: USER.id, password: USER.secret }).body }, true);
  if (!ok(password.status)) throw new Error(`setting ${USER.id}'s password answered ${password.status}: ${password.body.toString()}`);
  const cookies: string[] = [];
  for (let i = 0; i < 8; i++) {
    const login = await send(agent, kernel.port, { method: 'GET', path: '/api/v1/security/principals/authenticate', headers: user });
    if (!ok(login.status)) throw new Error(`login as ${USER.id} answered ${login.status}`);
    cookies.push(login.setCookie.map((c) => c.split(';')[0]).join('; '));
  }
  return { certDer, certPem: toPem(certDer), crlDer, csrPem, routes, userCookie: () => pick(cookies) };
}

export async function run(): Promise<void> {
  if (!Number.isInteger(N) || N <= 0 || !Number.isInteger(EVERY) || EVERY <= 0) throw new Error('SOAK_N and SOAK_EVERY must be positive integers');
  const busy = await cpuBusy(1_000);
  const kernel = await startKernel();
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\n${signal}: stopping the kernel\n`);
    void kernel.cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    process.stdout.write(
      [
        'Certwright soak benchmark: memory under a long mix of valid and hostile requests',
        `node ${process.version}, ${availableParallelism()} CPU(s); kernel on ${ENGINE}, trustProxy on; ${fmt(N)} requests, ${CONCURRENCY} in flight, seed ${SEED}`,
        `sampled every ${fmt(EVERY)} requests after draining and ${SETTLE_MS} ms of quiet: RSS and peak RSS from /proc, heap ${GC ? 'after two full GCs' : 'without forcing a GC'} (bench/lib/soak-probe.mjs)`,
        `goal: RSS after ${fmt(BASELINE_AT)} requests stays within +${LIMIT_MB} MB of its figure at ${fmt(BASELINE_AT)}`,
        `CPU busy before the run (1 s sample): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle (shared): rates are noisy; memory figures less so' : ''}`,
        '',
      ].join('\n'),
    );
    const material = await prepare(kernel, agent);
    // SOAK_ONLY=<words,…>: only the kinds whose names contain one of them (finding which input grows what).
    const only = (process.env.SOAK_ONLY ?? '').split(',').map((w) => w.trim()).filter(Boolean);
    const mix = kinds(material).filter((k) => only.length === 0 || only.some((w) => k.name.includes(w)));
    if (mix.length === 0) throw new Error(`SOAK_ONLY=${process.env.SOAK_ONLY} names no kind of request`);
    if (only.length) process.stdout.write(`SOAK_ONLY: ${mix.map((k) => k.name).join(', ')}\n`);
    const total = mix.reduce((s, k) => s + k.weight, 0);
    const chooseKind = (): Kind => {
      let x = rand() * total;
      for (const k of mix) if ((x -= k.weight) < 0) return k;
      return mix[mix.length - 1]!;
    };
    const counts = new Map<string, Map<number, number>>(mix.map((k) => [k.name, new Map()]));
    const busyMs = new Map<string, number>(mix.map((k) => [k.name, 0]));
    const unexpected = new Map<string, number>();

    const samples: Sample[] = [];
    const first = await sample(kernel, 0);
    samples.push(first);
    printSample(first);
    let done = 0;
    while (done < N) {
      const end = Math.min(N, done + EVERY);
      const started = performance.now();
      let next = done;
      const worker = async (): Promise<void> => {
        while (next < end) {
          next++;
          const kind = chooseKind();
          const t0 = performance.now();
          const { status } = await send(agent, kernel.port, kind.make());
          busyMs.set(kind.name, busyMs.get(kind.name)! + performance.now() - t0);
          const byStatus = counts.get(kind.name)!;
          byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
          if (kind.expect && !kind.expect(status)) unexpected.set(`${kind.name}: ${status}`, (unexpected.get(`${kind.name}: ${status}`) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const rate = ((end - done) * 1000) / (performance.now() - started);
      done = end;
      if (!kernel.server.running) throw new Error(`the kernel died after ${fmt(done)} requests:\n${kernel.server.output()}`);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const s = { ...(await sample(kernel, done)), rate };
      samples.push(s);
      printSample(s);
    }

    process.stdout.write('\nrequests by kind: count, mean latency, statuses ("closed": the connection closed without an answer)\n');
    for (const k of mix) {
      const byStatus = [...counts.get(k.name)!].sort((a, b) => a[0] - b[0]);
      const n = byStatus.reduce((s, [, c]) => s + c, 0);
      process.stdout.write(`  ${k.name.padEnd(30)} ${fmt(n).padStart(8)} ${fmt(n ? busyMs.get(k.name)! / n : 0, 1).padStart(7)} ms  ${byStatus.map(([st, c]) => `${st === 0 ? 'closed' : st}×${fmt(c)}`).join(' ')}\n`);
    }
    if (unexpected.size) {
      process.stdout.write('unexpected statuses (the mix, or the server, is not doing what it should):\n');
      for (const [what, c] of [...unexpected].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${what} ×${fmt(c)}\n`);
    }

    const base = samples.find((s) => s.at === BASELINE_AT) ?? samples.find((s) => s.at >= BASELINE_AT);
    const later = samples.filter((s) => base && s.at > base.at);
    const last = samples[samples.length - 1]!;
    process.stdout.write(`\nRSS at start ${mb(first.rss)} MB, at the end ${mb(last.rss)} MB, peak ${mb(last.peak)} MB\n`);
    if (!base || later.length === 0) {
      process.stdout.write(`growth after ${BASELINE_AT / 1000}k: n/a (run more than ${fmt(BASELINE_AT + EVERY)} requests; SOAK_N=${fmt(N)})\n`);
      return;
    }
    const growth = Math.max(...later.map((s) => s.rss)) - base.rss;
    const heapGrowth = base.heapUsed !== undefined && last.heapUsed !== undefined ? last.heapUsed - base.heapUsed : undefined;
    process.stdout.write(
      `growth after ${BASELINE_AT / 1000}k: ${mb(growth)} MB (limit ${LIMIT_MB} MB) — highest RSS after ${fmt(base.at)} requests minus RSS at ${fmt(base.at)}; ` +
        `at the end ${mb(last.rss - base.rss)} MB; heap used ${heapGrowth === undefined ? 'n/a' : `${heapGrowth >= 0 ? '+' : ''}${mb(heapGrowth)} MB`}\n`,
    );
    process.stdout.write(growth <= LIMIT_MB * MB ? `PASS  RSS stays within +${LIMIT_MB} MB after ${fmt(BASELINE_AT)} requests\n` : `FAIL  RSS grew ${mb(growth)} MB after ${fmt(BASELINE_AT)} requests (limit ${LIMIT_MB} MB)\n`);
  } finally {
    agent.destroy();
    await kernel.cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
