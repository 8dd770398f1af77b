/**
 * lego 4.9.1 (Debian's package) against the ACME server: http-01 and tls-alpn-01 (RFC 8737) with lego's own servers on
 * loopback ports,
 * and dns-01 through lego's RFC 2136 provider publishing the TXT record in a BIND9 the test starts (the
 * server's dns-01 lookups and the http-01 name resolution ask that BIND9 too). Each certificate verifies with
 * openssl against the issuer chain lego saved. With external account binding, on a profile requiring it: an EAB
 * policy and key made through the API, lego refused without EAB and with a wrong HMAC key, then obtaining. Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { startBind9 } from '../../helpers/bind9.js';
import { randomBytes } from 'node:crypto';
import { ADMIN_HEADERS, tempDir } from '../../helpers/kernel.js';
import { acmeKernel } from './acme-kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

const run = promisify(execFile);
const dir = tempDir(t, 'cw-lego-');
// `blocked` has a CAA record naming another CA (and its own A record: the wildcard no longer covers it).
const bind = await startBind9(t, 'acme.test', ['blocked IN CAA 0 issue "other-ca.example"', 'blocked IN A 127.0.0.1']);
const httpPort = await freePort();
const tlsPort = await freePort();
const { kernel, port, directory: server } = await acmeKernel(t, { bind, httpPort, tlsAlpnPort: tlsPort, retries: 3 });

async function lego(args: string[], env: Record<string, string> = {}, directory = server): Promise<string> {
  try {
    const { stdout, stderr } = await run('lego', ['--server', directory, '--accept-tos', '--email', 'ops@example.com', '--path', join(dir, 'lego'), ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, ...env },
    });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`lego failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

async function verifies(t: Test, domain: string, path = join(dir, 'lego')): Promise<void> {
  const file = (ext: string) => join(path, 'certificates', `${domain}.${ext}`);
  const chain = readFileSync(file('issuer.crt'), 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
  writeFileSync(join(dir, 'root.pem'), chain[chain.length - 1]! + '\n');
  const { stdout } = await run('openssl', ['verify', '-CAfile', join(dir, 'root.pem'), '-untrusted', file('issuer.crt'), file('crt')], { encoding: 'utf8' });
  t.match(stdout, /: OK/, `openssl verifies ${domain} against the chain the directory published`);
  const first = readFileSync(file('crt'), 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0];
  t.match(new X509Certificate(first).subjectAltName ?? '', new RegExp(`DNS:${domain.replace(/\./g, '\\.')}`), 'the certificate names the domain');
}

t.test('lego obtains over http-01', async (t) => {
  await lego(['--domains', 'web.acme.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run']);
  await verifies(t, 'web.acme.test');
});

t.test('lego obtains over tls-alpn-01', async (t) => {
  await lego(['--domains', 'alpn.acme.test', '--tls', '--tls.port', `127.0.0.1:${tlsPort}`, 'run']);
  await verifies(t, 'alpn.acme.test');
});

t.test('lego obtains over dns-01 with RFC 2136 updates to BIND9', async (t) => {
  await lego(['--domains', 'dns.acme.test', '--dns', 'rfc2136', '--dns.resolvers', `127.0.0.1:${bind.port}`, '--dns.disable-cp', 'run'], {
    RFC2136_NAMESERVER: `127.0.0.1:${bind.port}`,
    RFC2136_TSIG_KEY: `${bind.tsig.name}.`,
    RFC2136_TSIG_SECRET: bind.tsig.secret,
    RFC2136_TSIG_ALGORITHM: `${bind.tsig.algorithm}.`,
    RFC2136_PROPAGATION_TIMEOUT: '20',
    RFC2136_POLLING_INTERVAL: '1',
    RFC2136_TTL: '1',
  });
  await verifies(t, 'dns.acme.test');
});

t.test('CAA naming another CA fails the validation', async (t) => {
  const failed = await lego(['--domains', 'blocked.acme.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run']).then(
    () => '',
    (err: Error) => err.message,
  );
  t.match(failed, /urn:ietf:params:acme:error:caa/, 'the authorization fails with a caa problem');
});

t.test('lego obtains with external account binding on a profile that requires it', async (t) => {
  const admin = async (url: string, payload: unknown) => {
    const res = await kernel.app.inject({ method: 'POST', url, headers: { ...ADMIN_HEADERS, host: '127.0.0.1' }, payload: payload as object });
    t.equal(res.statusCode, 201, `POST ${url}: ${res.body}`);
    return res.json();
  };
  await admin('/api/v1/certificate/profiles/', { name: 'partners', pkiConnector: 'local-ca', protocols: { acme: { enabled: true, externalAccountRequired: true } } });
  await admin('/api/v1/acme/eab/policies/', { name: 'partners', profiles: ['partners'], identifiers: ['*.acme.test'], challengeTypes: ['http-01'] });
  const hmac = randomBytes(32).toString('base64url');
  const key = await admin('/api/v1/acme/eab/keys/', { name: 'partner-1', hmacKey: hmac, policy: 'partners' });
  t.equal(key.hmacKey, '********', 'the HMAC key is never answered');
  const directory = `http://127.0.0.1:${port}/acme/partners/directory`;
  const meta = await kernel.app.inject({ method: 'GET', url: '/acme/partners/directory', headers: { host: '127.0.0.1' } });
  t.equal(meta.json().meta.externalAccountRequired, true, 'the directory says EAB is required');
  const refused = await lego(['--path', join(dir, 'no-eab'), '--domains', 'no-eab.acme.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run'], {}, directory).then(
    () => '',
    (err: Error) => err.message,
  );
  t.match(refused, /externalAccountRequired|external account/i, 'without EAB the account is refused');
  const wrong = await lego(['--path', join(dir, 'wrong-eab'), '--eab', '--kid', 'partner-1', '--hmac', randomBytes(32).toString('base64url'), '--domains', 'x.acme.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run'], {}, directory).then(
    () => '',
    (err: Error) => err.message,
  );
  t.match(wrong, /unauthorized/, 'a wrong HMAC key is refused');
  // lego keeps one account per server host: a path of its own for the bound account (the last --path wins).
  await lego(['--path', join(dir, 'eab'), '--eab', '--kid', 'partner-1', '--hmac', hmac, '--domains', 'eab.acme.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run'], {}, directory);
  await verifies(t, 'eab.acme.test', join(dir, 'eab'));
  const accounts = await kernel.app.inject({ method: 'GET', url: '/api/v1/acme/accounts/?eabKid=partner-1', headers: { ...ADMIN_HEADERS, host: '127.0.0.1' } });
  t.equal(accounts.json().results.length, 1, 'one account is bound to the key');
  const outside = await lego(['--path', join(dir, 'eab'), '--eab', '--kid', 'partner-1', '--hmac', hmac, '--domains', 'eab.example.org', '--http', '--http.port', `127.0.0.1:${httpPort}`, 'run'], {}, directory).then(
    () => '',
    (err: Error) => err.message,
  );
  t.match(outside, /rejectedIdentifier/, "a name outside the key's policy is refused");
});
