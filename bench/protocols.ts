// `npm run bench -- protocols`: enrollment protocols against their peers, in one run.
//
//   EST      simpleenroll per second (P-256 CSRs made ahead, HTTP Basic with the administrator's local account:
//            argon2id verified once, then cached as logins are), CONCURRENCY keep-alive HTTPS connections, on a
//            kernel child process (`node bin/certwright.js serve`, SQLite in a temp data dir, the first start's
//            local CA and profile `default` with EST on), every answer checked (200, a certs-only PKCS#7).
//   WebRA    POST /api/v1/requests/submit (decentralized enroll on profile `default`, API-key authentication,
//            cached the same way) on the same kernel, same load, measured just before EST: the peer. Goal: EST ≥
//            100% of WebRA (EST has less to parse and answer).
//   SCEP     PKCSReq per second (RSA-2048 client keys, AES-256-CBC + SHA-256, a static challenge on profile
//            `scep-bench`, messages built ahead) over HTTP POST at CONCURRENCY, every CertRep checked (SUCCESS, its
//            signature, the certificate inside), beside node's RSA-2048 private-key operations per second on one
//            thread measured in the same run (crypto.sign, SHA-256): each PKCSReq needs two (open the envelope,
//            sign the CertRep). Goal: SCEP ≥ 25% of that rate. Printed beside it, not a goal: SCEP against the WebRA
//            rate of the same run, the floor every PKCSReq also pays (request workflow, CA signature, rows, events).
// PROTOCOLS_N requests per measurement after PROTOCOLS_WARMUP. Exit code 0 even when a goal is missed.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { cpus } from 'node:os';
import { buildCsr } from '../core/pki/csr/build.js';
import { toPem } from '../core/pki/input.js';
import { closedLoopRate } from './lib/closed-loop.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { LOOPBACK, startKernel, waitUntilAnswering } from './lib/servers.js';
import { scepBench } from './lib/scep-load.js';

const CONCURRENCY = 32;
const WARMUP = Number(process.env.PROTOCOLS_WARMUP ?? 64);
const N = Number(process.env.PROTOCOLS_N ?? 400);
const ADMIN_SECRET = `Bench-${randomBytes(9).toString('base64url')}`;

interface Answer {
  status: number;
  body: Buffer;
}

function call(agent: Agent | HttpAgent, url: string, method: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: { host: 'localhost', ...headers }, agent: agent as Agent, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function csrs(n: number, label: string): string[] {
  const run = randomBytes(3).toString('hex');
  return Array.from({ length: n }, (_, i) => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const name = `${label}-${run}-${i}.bench.example.com`;
    return toPem(buildCsr(privateKey, { subject: `CN=${name}`, sans: [{ sanType: 'DNSNAME', value: name }] }), 'CERTIFICATE REQUEST');
  });
}

async function measure<J>(jobs: J[], one: (job: J) => Promise<void>): Promise<number> {
  await closedLoopRate(jobs.slice(0, WARMUP), CONCURRENCY, one);
  return closedLoopRate(jobs.slice(WARMUP), CONCURRENCY, one);
}

/** RSA-2048 private-key operations per second on this thread (crypto.sign, SHA-256), best of three 1 s rounds. */
function rsaOpsPerSecond(): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const data = randomBytes(32);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    let n = 0;
    while (performance.now() - started < 1000) {
      sign('sha256', data, privateKey);
      n++;
    }
    best = Math.max(best, n / ((performance.now() - started) / 1000));
  }
  return best;
}

export async function run(): Promise<void> {
  const { kernel, port, tlsPort, dataDir } = await startKernel(ADMIN_SECRET);
  const tlsAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, rejectUnauthorized: false });
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
  const rows: string[][] = [];
  try {
    await waitUntilAnswering(kernel, `http://${LOOPBACK}:${port}/healthz`, { host: 'localhost' });
    const https = `https://${LOOPBACK}:${tlsPort}`;
    for (let i = 0; i < 100 && (await call(tlsAgent, `${https}/healthz`, 'GET', {}).then((a) => a.status, () => 0)) !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    const busy = await cpuBusy(500);
    process.stdout.write(`protocols: ${cpus().length} CPU(s), ${fmt(busy * 100)}% busy before the run; N=${N} after ${WARMUP} warm-up, concurrency ${CONCURRENCY}\n`);

    const apiHeaders = { 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET, 'content-type': 'application/json' };
    const webra = await measure(csrs(WARMUP + N, 'webra'), async (csr) => {
      const res = await call(tlsAgent, `${https}/api/v1/requests/submit`, 'POST', apiHeaders, JSON.stringify({ module: 'webra', workflow: 'enroll', profile: 'default', template: { csr } }));
      if (res.status !== 201 || !/"status":"completed"/.test(res.body.toString())) throw new Error(`WebRA enroll: ${res.status} ${res.body.toString().slice(0, 200)}`);
    });
    const basic = `Basic ${Buffer.from(`administrator:${ADMIN_SECRET}`).toString('base64')}`;
    const estJobs = csrs(WARMUP + N, 'est').map((pem) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''));
    const est = await measure(estJobs, async (b64) => {
      const res = await call(tlsAgent, `${https}/.well-known/est/default/simpleenroll`, 'POST', { authorization: basic, 'content-type': 'application/pkcs10' }, b64);
      if (res.status !== 200 || !res.body.toString().startsWith('MII')) throw new Error(`EST simpleenroll: ${res.status} ${res.body.toString().slice(0, 200)}`);
    });
    rows.push(['EST simpleenroll/s (TLS, Basic)', fmt(est, 1), `WebRA enroll/s ${fmt(webra, 1)}`, `${fmt((est / webra) * 100)}%`, '≥ 100%', est >= webra ? 'ok' : 'MISSED']);

    const created = await call(httpAgent, `http://${LOOPBACK}:${port}/api/v1/certificate/profiles/`, 'POST', apiHeaders, JSON.stringify({ name: 'scep-bench', pkiConnector: 'local-ca', protocols: { scep: { enabled: true, challenge: 'static', staticChallenge: 'Bench-Static-Challenge' } } }));
    if (created.status !== 201) throw new Error(`profile scep-bench: ${created.status} ${created.body.toString()}`);
    const scep = await scepBench({
      url: `http://${LOOPBACK}:${port}/scep/scep-bench/pkiclient.exe`,
      challenge: 'Bench-Static-Challenge',
      n: WARMUP + N,
      post: (url, body) => call(httpAgent, url, 'POST', { 'content-type': 'application/x-pki-message' }, body),
      get: (url) => call(httpAgent, url, 'GET', {}),
      measure,
    });
    const rsa = rsaOpsPerSecond();
    rows.push(['SCEP PKCSReq/s (RSA-2048 RA, AES+SHA-256)', fmt(scep, 1), `node RSA-2048 private ops/s ${fmt(rsa, 0)}`, `${fmt((scep / rsa) * 100)}%`, '≥ 25%', scep >= 0.25 * rsa ? 'ok' : 'MISSED']);
    // Not a goal: every PKCSReq is also a WebRA-like enrollment (workflow, CA signature, rows, events), so the
    // WebRA rate of this run bounds it whatever the RSA cost.
    rows.push(['  floor: SCEP / WebRA enroll', fmt(scep, 1), `WebRA enroll/s ${fmt(webra, 1)}`, `${fmt((scep / webra) * 100)}%`, '', '']);
  } finally {
    tlsAgent.destroy();
    httpAgent.destroy();
    await kernel.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...[['measure', 'rate', 'peer', 'ratio', 'goal', ''], ...rows].map((r) => r[i]!.length)));
  for (const row of [['measure', 'rate', 'peer', 'ratio', 'goal', ''], ...rows]) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
}
