/**
 * Runs Debian's `pebble` (Let's Encrypt's ACME test server) in the foreground for a test: loopback, free ports,
 * a temporary config, stopped by its PID at teardown.
 *
 * Debian's package ships no test certificates (upstream's test/certs/pebble.minica.pem is not in it: see
 * `dpkg -L pebble`), so the TLS certificate pebble serves is made here with openssl: a throw-away CA (what
 * the connector gets as caBundlePem) and a certificate for 127.0.0.1 / localhost.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir, type TestContext } from '../../helpers/kernel.js';

export const PEBBLE = '/usr/bin/pebble';
export const pebbleInstalled = (): boolean => existsSync(PEBBLE);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A CA and a server certificate for 127.0.0.1 and localhost, in `dir`. */
export function tlsFixture(dir: string): { caPem: string; certFile: string; keyFile: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'tls-ca.key', '-out', 'tls-ca.pem', '-subj', '/CN=pebble test TLS CA', '-days', '2']);
  run(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=localhost']);
  writeFileSync(join(dir, 'tls.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  run(['x509', '-req', '-in', 'tls.csr', '-CA', 'tls-ca.pem', '-CAkey', 'tls-ca.key', '-CAcreateserial', '-out', 'tls.pem', '-days', '2', '-extfile', 'tls.ext']);
  return { caPem: readFileSync(join(dir, 'tls-ca.pem'), 'utf8'), certFile: join(dir, 'tls.pem'), keyFile: join(dir, 'tls.key') };
}

/** GET over https trusting `caPem` only: status and body. */
export function httpsGet(url: string, caPem: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: caPem, agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

export interface PebbleOptions {
  /** Extra fields of the `pebble` config object (externalAccountBindingRequired, externalAccountMACKeys, domainBlocklist…). */
  config?: Record<string, unknown>;
  /** Extra environment (PEBBLE_WFE_NONCEREJECT…). */
  env?: Record<string, string>;
  /**
   * `host:port` of the DNS server pebble's validation authority asks (`-dnsserver`), e.g. the test's BIND9. With it,
   * pebble validates for real (no PEBBLE_VA_ALWAYS_VALID) and reuses no authorization (PEBBLE_AUTHZREUSE=0), so
   * every order's dns-01 challenges are answered through DNS.
   */
  dnsServer?: string;
}

export interface Pebble {
  directoryUrl: string;
  managementUrl: string;
  /** The CA of pebble's TLS certificate (caBundlePem). */
  tlsCaPem: string;
  /** Everything pebble printed so far. */
  output(): string;
  /**
   * How many requests pebble logged for `METHOD /path` (its "-> calling handler()" lines), once its log has
   * caught up with every request answered so far.
   */
  requests(method: string, path: string): Promise<number>;
  /** GET on the management interface (roots, intermediates, cert-status-by-serial). */
  management(path: string): Promise<{ status: number; body: string }>;
  /** Stops the process (by PID) and starts a new one on the same ports: all ACME state is lost. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts pebble with PEBBLE_VA_NOSLEEP=1 and, unless `dnsServer` is given, PEBBLE_VA_ALWAYS_VALID=1: the connector
 * answers only dns-01 (through a DCV policy), so for the other tests pebble is told to treat every challenge as
 * answered. PEBBLE_WFE_NONCEREJECT=0 unless `env` says otherwise, so that the assertions are
 * deterministic (the badNonce retry has its own test with 100 %).
 */
export async function startPebble(t: TestContext, options: PebbleOptions = {}): Promise<Pebble> {
  const dir = tempDir(t, 'cw-pebble-');
  const tls = tlsFixture(dir);
  const [acmePort, mgmtPort] = [await freePort(), await freePort()];
  const configFile = join(dir, 'pebble-config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: tls.certFile,
        privateKey: tls.keyFile,
        // Unused: PEBBLE_VA_ALWAYS_VALID means pebble never connects to validate, and dns-01 asks DNS only.
        httpPort: 5002,
        tlsPort: 5001,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        ...options.config,
      },
    }),
  );
  const validation = options.dnsServer ? { PEBBLE_AUTHZREUSE: '0' } : { PEBBLE_VA_ALWAYS_VALID: '1' };
  const env: NodeJS.ProcessEnv = { ...process.env, PEBBLE_VA_NOSLEEP: '1', ...validation, PEBBLE_WFE_NONCEREJECT: '0', ...options.env };
  if (options.dnsServer && !options.env?.PEBBLE_VA_ALWAYS_VALID) delete env.PEBBLE_VA_ALWAYS_VALID;
  const args = ['-config', configFile, '-strict=false', ...(options.dnsServer ? ['-dnsserver', options.dnsServer] : [])];
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const managementUrl = `https://127.0.0.1:${mgmtPort}`;
  let out = '';
  let child: ChildProcess | undefined;

  const start = async () => {
    const proc = spawn(PEBBLE, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let exited: string | undefined;
    proc.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.once('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (exited) throw new Error(`pebble ${exited} before answering:\n${out}`);
      try {
        const [dirRes, mgmtRes] = await Promise.all([httpsGet(directoryUrl, tls.caPem), httpsGet(`${managementUrl}/roots/0`, tls.caPem)]);
        if (dirRes.status === 200 && mgmtRes.status === 200) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) throw new Error(`pebble did not answer at ${directoryUrl} within 15 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    process.kill(proc.pid!, 'SIGTERM');
    const timer = setTimeout(() => proc.pid && proc.exitCode === null && process.kill(proc.pid, 'SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  };

  t.teardown(stop);
  await start();
  return {
    directoryUrl,
    managementUrl,
    tlsCaPem: tls.caPem,
    output: () => out,
    async requests(method, path) {
      // Pebble logs each request before handling it, in order, on one stream: once the line of a GET /dir
      // made now has arrived, so have the lines of every request answered before it.
      const count = (m: string, p: string) => out.split('\n').filter((l) => l.includes(` ${m} ${p} -> calling handler()`)).length;
      const marker = count('GET', '/dir') + 1;
      await httpsGet(directoryUrl, tls.caPem);
      const deadline = Date.now() + 5000;
      while (count('GET', '/dir') < marker) {
        if (Date.now() > deadline) throw new Error('pebble did not log a GET /dir within 5 s');
        await new Promise((r) => setTimeout(r, 5));
      }
      return count(method, path);
    },
    management: (path) => httpsGet(`${managementUrl}${path}`, tls.caPem),
    async restart() {
      await stop();
      await start();
    },
    stop,
  };
}
