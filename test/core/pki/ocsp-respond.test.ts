import { createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { caIdentity } from '../../../core/pki/keys/ca-identity.js';
import { decodeOcsp, type OcspResponseInfo } from '../../../core/pki/ocsp/decode.js';
import { OcspResponder, type OcspStatus } from '../../../core/pki/ocsp/respond.js';
import { tempDir, type TestContext } from '../../helpers/kernel.js';
import { LEAF_EXT, OpensslPki, openssl, type Made } from '../../helpers/openssl-pki.js';
import { verdict } from '../../helpers/pki-tools.js';

// openssl checks thisUpdate / nextUpdate against its clock: the responder's clock is now (whole seconds).
const NOW = Math.floor(Date.now() / 1000) * 1000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** A time as openssl prints it: "Nov  2 12:00:00 2026 GMT". */
function opensslDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${d.getUTCFullYear()} GMT`;
}
const REVOKED_AT = NOW - 3_600_000;

interface Setup {
  dir: string;
  ca: Made;
  good: Made;
  revoked: Made;
  unknown: Made;
  responder: OcspResponder;
  asked: string[];
  lookup: (serial: string) => Promise<OcspStatus>;
}

/** An openssl CA with three leaves; the lookup answers as an inventory would (good, revoked, never issued). */
function setup(t: TestContext, keySpec?: string): Setup {
  const dir = tempDir(t, 'cw-ocsp-');
  const pki = new OpensslPki(dir);
  let keyPath: string | undefined;
  if (keySpec) {
    keyPath = join(dir, 'ca.key');
    openssl(['genpkey', ...(keySpec.startsWith('rsa') ? ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${keySpec.slice(4)}`] : ['-algorithm', keySpec]), '-out', keyPath]);
  }
  const ca = pki.root('ca', '/C=FR/O=Certwright Test/CN=OCSP Test CA', keyPath ? { keyPath } : {});
  const good = pki.issue('good', '/CN=good.example', ca, { ext: LEAF_EXT });
  const revoked = pki.issue('revoked', '/CN=revoked.example', ca, { ext: LEAF_EXT });
  const unknown = pki.issue('unknown', '/CN=unknown.example', ca, { ext: LEAF_EXT });
  const caDer = new Uint8Array(Buffer.from(ca.pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'));
  const responder = new OcspResponder(caIdentity(caDer, createPrivateKey(readFileSync(ca.keyPath))), () => NOW);
  const asked: string[] = [];
  // Serials as the inventory holds them (the X.509 decoder's whole-byte lower-case hex).
  const statuses = new Map<string, OcspStatus>([
    [pki.serial(good), { status: 'good' }],
    [pki.serial(revoked), { status: 'revoked', revokedAt: REVOKED_AT, reason: 'keyCompromise' }],
  ]);
  const lookup = async (serial: string): Promise<OcspStatus> => {
    asked.push(serial);
    return statuses.get(serial) ?? { status: 'unknown' };
  };
  return { dir, ca, good, revoked, unknown, responder, asked, lookup };
}

const ocsp = (dir: string, ...args: string[]): string => verdict(dir, 'openssl', ['ocsp', ...args]);

for (const digest of ['sha1', 'sha256'] as const) {
  t.test(`openssl asks with ${digest} CertIDs, the responder answers good / revoked / unknown, openssl verifies`, async (t) => {
    const s = setup(t);
    const certs = ['-cert', s.good.certPath, '-cert', s.revoked.certPath, '-cert', s.unknown.certPath];
    ocsp(s.dir, `-${digest}`, '-issuer', s.ca.certPath, ...certs, '-reqout', 'req.der');
    const response = await s.responder.respond(readFileSync(join(s.dir, 'req.der')), s.lookup, { validitySeconds: 600 });
    write(s.dir, 'resp.der', response);
    // -reqin: openssl compares the nonce it sent with the one answered.
    const withRequest = ocsp(s.dir, '-respin', 'resp.der', '-reqin', 'req.der', '-CAfile', s.ca.certPath, '-resp_text');
    t.match(withRequest, /Response verify OK/);
    t.notMatch(withRequest, /nonce verify error|WARNING: no nonce/i);
    t.match(withRequest, /OCSP Nonce:/);
    t.match(withRequest, new RegExp(`Hash Algorithm: ${digest}`));
    t.match(withRequest, /Responder Id: [0-9A-F]{40}\n/);

    const summary = ocsp(s.dir, '-respin', 'resp.der', '-CAfile', s.ca.certPath, '-issuer', s.ca.certPath, `-${digest}`, ...certs, '-no_nonce');
    t.match(summary, /Response verify OK/);
    t.notMatch(summary, /WARNING|error/);
    t.match(summary, new RegExp(`good\\.pem: good\\n\\s*This Update: ${opensslDate(NOW)}\\n\\s*Next Update: ${opensslDate(NOW + 600_000)}`));
    t.match(summary, new RegExp(`revoked\\.pem: revoked\\n[\\s\\S]*?Reason: keyCompromise\\n\\s*Revocation Time: ${opensslDate(REVOKED_AT)}`));
    t.match(summary, /unknown\.pem: unknown/);
    t.equal(s.asked.length, 3, 'each CertID of this CA is looked up once');

    const decoded = decodeOcsp(response) as OcspResponseInfo;
    t.equal(decoded.responseStatus, 'successful');
    t.equal(decoded.signatureValid, true, 'the CA certificate is embedded and verifies the signature');
    t.equal(decoded.producedAt, NOW);
    t.same(
      decoded.responses!.map((r) => [r.hashAlgorithm, r.certStatus, r.thisUpdate, r.nextUpdate, r.revocationTime, r.revocationReason]),
      [
        [digest, 'good', NOW, NOW + 600_000, undefined, undefined],
        [digest, 'revoked', NOW, NOW + 600_000, REVOKED_AT, 'keyCompromise'],
        [digest, 'unknown', NOW, NOW + 600_000, undefined, undefined],
      ],
    );
    const request = decodeOcsp(readFileSync(join(s.dir, 'req.der')));
    t.equal(request.kind, 'request');
    t.equal(decoded.nonce, (request as { nonce?: string }).nonce, 'the nonce is echoed');
  });
}

t.test('a CertID of another issuer is unknown without asking; no nonce asked, none answered', async (t) => {
  const s = setup(t);
  const other = new OpensslPki(s.dir).root('other', '/CN=Other CA');
  ocsp(s.dir, '-issuer', other.certPath, '-cert', s.good.certPath, '-no_nonce', '-reqout', 'req.der');
  const response = await s.responder.respond(readFileSync(join(s.dir, 'req.der')), s.lookup);
  write(s.dir, 'resp.der', response);
  const out = ocsp(s.dir, '-respin', 'resp.der', '-CAfile', s.ca.certPath, '-issuer', s.ca.certPath, '-resp_text', '-no_nonce');
  t.match(out, /Response verify OK/);
  t.match(out, /Cert Status: unknown/);
  t.same(s.asked, []);
  const decoded = decodeOcsp(response) as OcspResponseInfo;
  t.equal(decoded.nonce, undefined);
  t.equal(decoded.responses![0]!.nextUpdate, NOW + 3_600_000, 'default validity: one hour');
});

t.test('a request that does not parse answers malformedRequest', async (t) => {
  const s = setup(t);
  for (const bad of [new Uint8Array(0), Buffer.from('not an OCSP request'), Buffer.from('3003020101', 'hex'), Buffer.from('30023000', 'hex'), readFileSync(s.ca.certPath)]) {
    const response = await s.responder.respond(bad, s.lookup);
    t.same((decodeOcsp(response) as OcspResponseInfo).responseStatus, 'malformedRequest');
  }
  write(s.dir, 'bad.der', await s.responder.respond(Buffer.from('garbage'), s.lookup));
  t.match(ocsp(s.dir, '-respin', 'bad.der', '-resp_text', '-noverify'), /Responder Error: malformedrequest \(1\)/);
  t.same(s.asked, []);
});

for (const keySpec of ['rsa:2048', 'ed25519']) {
  t.test(`a ${keySpec} CA signs its answers with its own algorithm`, async (t) => {
    const s = setup(t, keySpec === 'ed25519' ? 'ED25519' : keySpec.replace(':', '-'));
    ocsp(s.dir, '-issuer', s.ca.certPath, '-cert', s.revoked.certPath, '-reqout', 'req.der');
    write(s.dir, 'resp.der', await s.responder.respond(readFileSync(join(s.dir, 'req.der')), s.lookup));
    const out = ocsp(s.dir, '-respin', 'resp.der', '-reqin', 'req.der', '-CAfile', s.ca.certPath, '-resp_text');
    t.match(out, /Response verify OK/);
    t.match(out, keySpec === 'ed25519' ? /Signature Algorithm: ED25519/ : /Signature Algorithm: sha256WithRSAEncryption/);
    t.match(out, /Cert Status: revoked/);
  });
}

function write(dir: string, name: string, bytes: Uint8Array): void {
  writeFileSync(join(dir, name), bytes);
}
