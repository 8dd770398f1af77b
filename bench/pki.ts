// `npm run bench -- pki`: the PKI hot paths beside node:crypto, measured in the same run.
//
// In process, single thread (one core), interleaved rounds of ROUND_MS per target, each row the median round:
//   parse   parseCertificate (the full CertificateInfo: names, SANs, extensions, SHA-1/SHA-256 thumbprints, SPKI
//           thumbprint, PEM) over PARSE_SET distinct leaf certificates (RSA-2048 and P-256 keys, 4 SANs, EKU, CDP,
//           AIA, policies) issued by an RSA-2048 CA, beside node's crypto.X509Certificate over the same DER:
//           construction only (the goal's peer: the cheapest thing node does), and construction plus reading the
//           equivalent text fields. Goal: ≥ PARSE_GOAL × the construction-only rate. pkijs is timed once for context.
//   issue   CertificateIssuer.issue: CSR (DER) → signed certificate with a P-256 CA key — CSR walk, CSR signature
//           check, TBSCertificate with 7 extensions, one ECDSA P-256/SHA-256 signature — over ISSUE_SET CSRs with
//           distinct P-256 keys (more than the KeyObject cache holds: every CSR key is imported cold), beside
//           crypto.sign('sha256', 600 bytes, cached P-256 KeyObject). Goal: ≥ ISSUE_GOAL × that sign rate.
// Over HTTP: the kernel (`node bin/certwright.js serve`, SQLite, LOG_LEVEL=warn) answering
// POST /api/v1/rfc5280/x509 {"pem": …} with an API key, driven by autocannon beside GET /healthz; certificates/s
// printed. Exit code 0 even when a goal FAILs (1 only when the benchmark itself cannot run).
import autocannon from 'autocannon';
import { generateKeyPairSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { rmSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import * as pkijs from 'pkijs';
import { buildCsr } from '../core/pki/csr/build.js';
import { toPem } from '../core/pki/input.js';
import { CertificateIssuer } from '../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../core/pki/issue/self-signed.js';
import type { CertificateTemplate } from '../core/pki/issue/template.js';
import { parseCertificate } from '../core/pki/x509/parse.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { get, LOOPBACK, medianRound, waitUntilAnswering, startKernel } from './lib/servers.js';

const PARSE_GOAL = 1.5;
const ISSUE_GOAL = 0.08;
const PARSE_SET = 256;
const ISSUE_SET = 2048;
const ROUNDS = 5;
const ROUND_MS = 700;
const HTTP_CONNECTIONS = 20;
const HTTP_WARMUP_SECONDS = 2;
const HTTP_ROUNDS = 3;
const HTTP_SECONDS = 3;
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
const WATCHDOG_MS = 88_000;

const LEAF_TEMPLATE: CertificateTemplate = {
  validityDays: 90,
  extendedKeyUsage: ['serverAuth', 'clientAuth'],
  crlDistributionPoints: ['http://crl.example.com/issuing-ca.crl'],
  ocsp: ['http://ocsp.example.com/'],
  caIssuers: ['http://ca.example.com/issuing-ca.crt'],
  policies: ['2.23.140.1.2.2'],
};

/** Operations per second of `op` cycling over `items` for `ms` (batches keep the clock out of the loop). */
function rate<T>(items: readonly T[], op: (item: T) => unknown, ms: number): number {
  let n = 0;
  let i = 0;
  const started = performance.now();
  let now = started;
  while (now - started < ms) {
    for (let b = 0; b < 32; b++) op(items[i++ % items.length]!);
    n += 32;
    now = performance.now();
  }
  return (n * 1000) / (now - started);
}

interface Target {
  label: string;
  run: (ms: number) => number;
}

/** Interleaved rounds (every target once per round), the median rate of each. */
function measure(targets: Target[]): number[] {
  for (const t of targets) t.run(ROUND_MS / 2); // warm-up: JIT, caches of the runtime
  const rounds: number[][] = targets.map(() => []);
  for (let r = 0; r < ROUNDS; r++) targets.forEach((t, i) => rounds[i]!.push(t.run(ROUND_MS)));
  return rounds.map((rs) => rs.sort((a, b) => a - b)[Math.floor(rs.length / 2)]!);
}

function table(header: string[], rows: string[][]): void {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

const verdict = (ratio: number, goal: number): string => (ratio >= goal ? 'PASS' : 'FAIL');

/** The leaf certificates of the parse set and the CSRs of the issue set. */
function fixtures(): { leaves: Uint8Array[]; csrs: Uint8Array[]; p256Ca: CertificateIssuer; p256Key: KeyObject } {
  const rsaCa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsaCaDer = selfSignedCertificate(rsaCa.privateKey, { subject: 'CN=Bench Issuing CA,O=Certwright,C=FR' });
  const rsaIssuer = new CertificateIssuer({ caCertificateDer: rsaCaDer, caKey: rsaCa.privateKey });
  const leafKeys = [
    ...Array.from({ length: 4 }, () => generateKeyPairSync('rsa', { modulusLength: 2048 })),
    ...Array.from({ length: 4 }, () => generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  ];
  const leaves = Array.from({ length: PARSE_SET }, (_, i) => {
    const host = `host-${i}.bench.example.com`;
    const csr = buildCsr(leafKeys[i % leafKeys.length]!.privateKey, {
      subject: `CN=${host},OU=Bench,O=Certwright,L=Paris,C=FR`,
      sans: [
        { sanType: 'DNSNAME', value: host },
        { sanType: 'DNSNAME', value: `www.${host}` },
        { sanType: 'IPADDRESS', value: `10.0.${i >> 8}.${i & 255}` },
        { sanType: 'RFC822NAME', value: `ops-${i}@example.com` },
      ],
    });
    return rsaIssuer.issue(csr, LEAF_TEMPLATE);
  });
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const p256CaDer = selfSignedCertificate(p256.privateKey, { subject: 'CN=Bench P-256 CA,O=Certwright,C=FR' });
  const csrs = Array.from({ length: ISSUE_SET }, (_, i) =>
    buildCsr(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, {
      subject: `CN=client-${i}.example.com,O=Certwright`,
      sans: [{ sanType: 'DNSNAME', value: `client-${i}.example.com` }],
    }),
  );
  return { leaves, csrs, p256Ca: new CertificateIssuer({ caCertificateDer: p256CaDer, caKey: p256.privateKey }), p256Key: p256.privateKey };
}

function inProcess(leaves: Uint8Array[], csrs: Uint8Array[], ca: CertificateIssuer, caKey: KeyObject): void {
  // Checks first: every figure below is of work that succeeds.
  for (const l of leaves.slice(0, 8)) if (parseCertificate(l).thumbprint !== new X509Certificate(l).fingerprint.replace(/:/g, '').toLowerCase()) throw new Error('parse self-check failed');
  if (!new X509Certificate(ca.issue(csrs[0]!, LEAF_TEMPLATE)).subject) throw new Error('issue self-check failed');

  const nodeFields = (der: Uint8Array): void => {
    const c = new X509Certificate(der);
    void [c.subject, c.issuer, c.serialNumber, c.validFrom, c.validTo, c.fingerprint, c.fingerprint256, c.subjectAltName, c.keyUsage, c.infoAccess];
  };
  const [ours, nodeConstruct, nodeWithFields] = measure([
    { label: 'parse', run: (ms) => rate(leaves, parseCertificate, ms) },
    { label: 'node', run: (ms) => rate(leaves, (d) => new X509Certificate(d), ms) },
    { label: 'node+fields', run: (ms) => rate(leaves, nodeFields, ms) },
  ]) as [number, number, number];
  const pkijsRate = rate(leaves, (d) => pkijs.Certificate.fromBER(d), ROUND_MS);

  const tbs = new Uint8Array(600).fill(7);
  const [issued, signed] = measure([
    { label: 'issue', run: (ms) => rate(csrs, (csr) => ca.issue(csr, LEAF_TEMPLATE), ms) },
    { label: 'sign', run: (ms) => rate([tbs], (d) => sign('sha256', d, caKey), ms) },
  ]) as [number, number];

  const parseRatio = ours / nodeConstruct;
  const issueRatio = issued / signed;
  table(
    ['in process, 1 thread', 'ops/s', 'vs peer', 'goal', 'result'],
    [
      [`parseCertificate (${PARSE_SET} leaf certificates, full CertificateInfo)`, fmt(ours), `${fmt(parseRatio, 2)}×`, `≥${PARSE_GOAL}×`, verdict(parseRatio, PARSE_GOAL)],
      ['  peer: new X509Certificate(der)', fmt(nodeConstruct), '1.00×', '', 'peer'],
      ['  node X509Certificate + subject, issuer, serial, dates, fingerprints, SAN, KU, AIA', fmt(nodeWithFields), `${fmt(nodeWithFields / nodeConstruct, 2)}×`, '', 'info'],
      ['  pkijs Certificate.fromBER (object graph only)', fmt(pkijsRate), `${fmt(pkijsRate / nodeConstruct, 2)}×`, '', 'info'],
      [`CSR → signed certificate, P-256 CA (${ISSUE_SET} CSRs, distinct keys)`, fmt(issued), `${fmt(issueRatio * 100, 1)}%`, `≥${fmt(ISSUE_GOAL * 100)}%`, verdict(issueRatio, ISSUE_GOAL)],
      ['  peer: crypto.sign P-256/SHA-256, cached KeyObject', fmt(signed), '100%', '', 'peer'],
    ],
  );
  process.stdout.write(
    `\n${verdict(parseRatio, PARSE_GOAL)}  hot parse ${fmt(parseRatio, 2)}× node's X509Certificate (goal ≥${PARSE_GOAL}×)\n` +
      `${verdict(issueRatio, ISSUE_GOAL)}  issuance ${fmt(issueRatio * 100, 1)}% of single-core P-256 sign/s (goal ≥${fmt(ISSUE_GOAL * 100)}%)\n`,
  );
}

async function overHttp(pem: string): Promise<void> {
  const { kernel, port, dataDir } = await startKernel(ADMIN_SECRET);
  try {
    const base = `http://${LOOPBACK}:${port}`;
    const auth = { host: 'localhost', 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET };
    await waitUntilAnswering(kernel, `${base}/healthz`, { host: 'localhost' });
    const body = JSON.stringify({ pem });
    const check = await fetch(`${base}/api/v1/rfc5280/x509`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
    if (check.status !== 200) throw new Error(`POST /api/v1/rfc5280/x509 answered ${check.status}: ${(await check.text()).slice(0, 300)}`);
    const health = await get(`${base}/healthz`, { host: 'localhost' });
    if (health.status !== 200) throw new Error(`/healthz answered ${health.status}`);
    const targets = [
      { label: 'POST /api/v1/rfc5280/x509 {"pem"} (API key)', opts: { method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body, url: `${base}/api/v1/rfc5280/x509` } },
      { label: 'GET /healthz (no auth, context)', opts: { method: 'GET' as const, headers: { host: 'localhost' }, url: `${base}/healthz` } },
    ];
    const load = (o: (typeof targets)[number]['opts'], duration: number) => autocannon({ ...o, connections: HTTP_CONNECTIONS, duration });
    for (const t of targets) await load(t.opts, HTTP_WARMUP_SECONDS);
    const rounds: autocannon.Result[][] = targets.map(() => []);
    for (let r = 0; r < HTTP_ROUNDS; r++) for (const [i, t] of targets.entries()) rounds[i]!.push(await load(t.opts, HTTP_SECONDS));
    if (!kernel.running) throw new Error(`the kernel died during the benchmark:\n${kernel.output()}`);
    const results = rounds.map(medianRound);
    table(
      ['over HTTP (kernel, autocannon in this process)', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'],
      targets.map((t, i) => {
        const r = results[i]!;
        return [t.label, fmt(r.requests.average, 1), fmt(r.latency.p50), fmt(r.latency.p99), fmt(r.non2xx), fmt(r.errors)];
      }),
    );
    const decoded = results[0]!;
    process.stdout.write(
      `\nINFO  POST /api/v1/rfc5280/x509 decodes ${fmt(decoded.requests.average, 0)} certificates/s over HTTP` +
        `${decoded.non2xx || decoded.errors ? ' — WITH ERRORS, not a valid figure' : ''} ` +
        `(${HTTP_CONNECTIONS} connections; the load generator shares the ${availableParallelism()} CPU(s))\n`,
    );
  } finally {
    await kernel.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const watchdog = setTimeout(() => {
    process.stderr.write(`\nbench pki: still running after ${WATCHDOG_MS / 1000} s, giving up\n`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    const cpu = cpus()[0];
    process.stdout.write(
      [
        'Certwright PKI benchmark',
        `node ${process.version}, ${availableParallelism()} CPU(s)${cpu ? ` (${cpu.model.trim()})` : ''}`,
        `in process: ${ROUNDS} interleaved rounds of ${ROUND_MS} ms per target after a warm-up, each row the median round`,
        '',
      ].join('\n'),
    );
    const busy = await cpuBusy(1_000);
    process.stdout.write(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle, figures will be noisy' : ''}\n`);
    const started = performance.now();
    const { leaves, csrs, p256Ca, p256Key } = fixtures();
    process.stdout.write(`fixtures: ${PARSE_SET} leaf certificates, ${ISSUE_SET} CSRs in ${fmt((performance.now() - started) / 1000, 1)} s\n`);
    inProcess(leaves, csrs, p256Ca, p256Key);
    await overHttp(toPem(leaves[0]!));
  } finally {
    clearTimeout(watchdog);
  }
}
