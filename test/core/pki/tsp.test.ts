import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { decodeInput } from '../../../core/pki/input.js';
import { decodeTsp, type TspQueryInfo, type TspReplyInfo, type TspTokenInfo } from '../../../core/pki/tsp/decode.js';
import { fieldsOf, openssl, opensslTime, slashedToRfc4514, smallCa, tsa, verdict } from '../../helpers/pki-tools.js';
import { assertOnlyProblems } from '../../helpers/mutations.js';

const ca = smallCa(t);
const dir = tsa(ca);
writeFileSync(join(dir, 'data.txt'), 'hello certwright\n');
const file = (name: string) => readFileSync(join(dir, name));

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof ProblemError ? err.code : `not a ProblemError: ${String(err)}`;
  }
  return 'no error';
};

/** openssl's "Message data:" hex dump ("0000 - 58 91 b5 …-6d 0f …   X..."), as one hex string. */
const messageData = (text: string): string =>
  [...text.matchAll(/^\s+[0-9a-f]{4} - ((?:[0-9a-f]{2}[ -]){0,15}[0-9a-f]{2})/gm)].map((m) => m[1]!.replace(/[ -]/g, '')).join('');
/** openssl's "0xA168…" or "unspecified". */
const hexOrUndefined = (text: string | undefined) => (text === undefined || text === 'unspecified' ? undefined : text.replace(/^0x/, '').toLowerCase());

const QUERIES = {
  'q1.tsq': ['-sha256', '-cert'],
  'q2.tsq': ['-sha1', '-no_nonce', '-tspolicy', '1.3.6.1.4.1.99999.2'],
  'q3.tsq': ['-sha256', '-tspolicy', '1.2.9.9'],
  'q4.tsq': ['-md5'],
};
for (const [name, args] of Object.entries(QUERIES)) openssl(dir, 'ts', '-query', '-data', 'data.txt', ...args, '-out', name);
for (const n of [1, 2, 3, 4]) openssl(dir, 'ts', '-reply', '-config', 'tsa.cnf', '-queryfile', `q${n}.tsq`, '-out', `r${n}.tsr`);
openssl(dir, 'ts', '-reply', '-in', 'r1.tsr', '-token_out', '-out', 'token1.der');

t.test('queries: every field as openssl ts -query -text prints it', async (t) => {
  for (const name of Object.keys(QUERIES)) {
    const text = openssl(dir, 'ts', '-query', '-in', name, '-text');
    const info = decodeTsp(file(name)) as TspQueryInfo;
    t.equal(info.kind, 'query', `${name}: detected as a query`);
    t.equal(String(info.version), fieldsOf(text, 'Version')[0]);
    t.same(info.messageImprint, { hashAlgorithm: fieldsOf(text, 'Hash Algorithm')[0], hash: messageData(text) }, `${name}: message imprint`);
    const policy = fieldsOf(text, 'Policy OID')[0];
    t.equal(info.policy, policy === 'unspecified' ? undefined : policy, `${name}: policy`);
    t.equal(info.nonce, hexOrUndefined(fieldsOf(text, 'Nonce')[0]), `${name}: nonce`);
    t.equal(info.certReq ? 'yes' : 'no', fieldsOf(text, 'Certificate required')[0], `${name}: certReq`);
    t.equal(info.extensions, undefined);
  }
});

/** Compares a decoded token with the "TST info:" part of openssl ts -reply -text. */
function compareToken(t: Test, token: TspTokenInfo, text: string) {
  t.equal(String(token.version), fieldsOf(text, 'Version')[0], 'version');
  t.equal(token.policy, fieldsOf(text, 'Policy OID')[0], 'policy');
  t.same(token.messageImprint, { hashAlgorithm: fieldsOf(text, 'Hash Algorithm')[0], hash: messageData(text) }, 'message imprint');
  t.equal(token.serial, hexOrUndefined(fieldsOf(text, 'Serial number')[0]), 'serial');
  t.equal(token.genTime, opensslTime(fieldsOf(text, 'Time stamp')[0]!), 'genTime, with its milliseconds');
  const [, s, m, u] = /0x([0-9A-F]+) seconds, 0x([0-9A-F]+) millis, 0x([0-9A-F]+) micros/.exec(fieldsOf(text, 'Accuracy')[0]!)!;
  t.same(token.accuracy, { seconds: parseInt(s!, 16), millis: parseInt(m!, 16), micros: parseInt(u!, 16) }, 'accuracy');
  t.equal(token.ordering ? 'yes' : 'no', fieldsOf(text, 'Ordering')[0], 'ordering');
  t.equal(token.nonce, hexOrUndefined(fieldsOf(text, 'Nonce')[0]), 'nonce');
  t.equal(token.tsa, slashedToRfc4514(fieldsOf(text, 'TSA')[0]!.replace(/^DirName:/, '')), 'tsa');
}

t.test('replies: status and token as openssl ts -reply -text prints them, signer and signature', async (t) => {
  const tsaCert = openssl(dir, 'x509', '-in', 'tsa.pem', '-noout', '-serial', '-subject', '-issuer', '-nameopt', 'RFC2253');
  const tsaSerial = /serial=(.*)/.exec(tsaCert)![1]!.toLowerCase();
  const tsaDn = /subject=(.*)/.exec(tsaCert)![1]!;
  for (const [name, query, withCert] of [['r1.tsr', 'q1.tsq', true], ['r2.tsr', 'q2.tsq', false]] as const) {
    t.test(name, async (t) => {
      const text = openssl(dir, 'ts', '-reply', '-in', name, '-text');
      openssl(dir, 'ts', '-reply', '-in', name, '-token_out', '-out', `${name}.token`);
      const info = decodeTsp(file(name)) as TspReplyInfo;
      t.equal(info.kind, 'reply');
      t.equal(fieldsOf(text, 'Status')[0], 'Granted.');
      t.equal(info.status, 'granted');
      t.equal(fieldsOf(text, 'Status description')[0], 'unspecified');
      t.equal(info.statusText, undefined);
      t.equal(info.failInfo, undefined);
      const token = info.token!;
      compareToken(t, token, text);
      t.equal(token.signer.serial, tsaSerial, 'signer serial (from its identifier)');
      t.equal(token.signer.issuer, /issuer=(.*)/.exec(tsaCert)![1], 'signer issuer');
      t.equal(token.signer.dn, tsaDn, 'signer dn');
      const cms = openssl(dir, 'cms', '-inform', 'DER', '-in', `${name}.token`, '-cmsout', '-print');
      const algorithm = (label: string) => new RegExp(`${label}: *\\n\\s+algorithm: (\\S+)`).exec(cms)![1];
      t.equal(token.digestAlgorithm, algorithm('digestAlgorithm'), 'digest algorithm as openssl cms -print names it');
      t.equal(token.signingAlgorithm, algorithm('signatureAlgorithm'), 'signature algorithm as openssl cms -print names it');
      t.match(verdict(dir, 'openssl', ['ts', '-verify', '-in', name, '-queryfile', query, '-CAfile', 'ca.pem', '-untrusted', 'tsa.pem']), /Verification: OK/, 'openssl verifies it');
      if (withCert) {
        t.equal(token.signer.certificate?.serial, tsaSerial, 'the signer certificate, decoded');
        t.equal(token.signer.certificate?.dn, tsaDn);
        t.same(
          token.certificates.map((c) => c.dn),
          [tsaDn, 'CN=Test CA,O=Certwright Test,C=FR'],
          'every embedded certificate',
        );
        t.equal(token.signatureValid, true, 'message digest and signature check out');
      } else {
        t.equal(token.signer.certificate, undefined);
        t.same(token.certificates, []);
        t.equal(token.signatureValid, null, 'no certificate to check with');
      }
    });
  }
});

t.test('a bare token (-token_out) decodes as the reply carries it', async (t) => {
  const info = decodeTsp(file('token1.der'));
  t.equal(info.kind, 'token');
  t.same(info, { kind: 'token', token: (decodeTsp(file('r1.tsr')) as TspReplyInfo).token });
});

t.test('rejections: status, text and failure bits', async (t) => {
  // openssl prints each failure bit as a sentence; these are the two the queries provoke.
  const sentences: Record<string, string> = {
    unacceptedPolicy: 'the requested TSA policy is not supported by the TSA',
    badAlg: 'unrecognized or unsupported algorithm identifier',
  };
  for (const name of ['r3.tsr', 'r4.tsr']) {
    const text = openssl(dir, 'ts', '-reply', '-in', name, '-text');
    const info = decodeTsp(file(name)) as TspReplyInfo;
    t.equal(fieldsOf(text, 'Status')[0], 'Rejected.');
    t.equal(info.status, 'rejection');
    t.same(info.statusText, [fieldsOf(text, 'Status description')[0]], `${name}: status text`);
    t.same(info.failInfo?.map((f) => sentences[f]), [fieldsOf(text, 'Failure info')[0]], `${name}: failure bits`);
    t.equal(info.token, undefined);
  }
});

t.test('a token altered after signing has signatureValid false', async (t) => {
  const bytes = Buffer.from(file('r1.tsr'));
  // genTime is the first GeneralizedTime (tag 0x18, "20…"; certificates use UTCTime): change its seconds' last digit.
  const at = bytes.findIndex((b, i) => b === 0x18 && bytes[i + 2] === 0x32 && bytes[i + 3] === 0x30);
  t.ok(at > 0, 'genTime found');
  bytes[at + 15] = bytes[at + 15] === 0x30 ? 0x31 : 0x30;
  writeFileSync(join(dir, 'altered.tsr'), bytes);
  const info = decodeTsp(bytes) as TspReplyInfo;
  t.equal(info.token?.genTime, opensslTime(fieldsOf(openssl(dir, 'ts', '-reply', '-in', 'altered.tsr', '-text'), 'Time stamp')[0]!));
  t.equal(info.token?.signatureValid, false);
  t.notMatch(verdict(dir, 'openssl', ['ts', '-verify', '-in', 'altered.tsr', '-queryfile', 'q1.tsq', '-CAfile', 'ca.pem', '-untrusted', 'tsa.pem']), /Verification: OK/, 'openssl refuses it too');
});

t.test('bad input: a specific PKI code, quickly', async (t) => {
  const reply = file('r1.tsr');
  openssl(dir, 'crl2pkcs7', '-nocrl', '-certfile', 'ca.pem', '-outform', 'DER', '-out', 'certs.p7b');
  const deep = Buffer.concat(Array.from({ length: 3000 }, (_, i) => Buffer.from([0x30, 0x82, ((3000 - i - 1) * 4) >> 8, ((3000 - i - 1) * 4) & 0xff])));
  const cases: [string, Uint8Array, string][] = [
    ['truncated', reply.subarray(0, 300), 'PKI-001'],
    ['garbage', Buffer.from([0xde, 0xad, 0xbe, 0xef]), 'PKI-001'],
    ['trailing bytes', Buffer.concat([reply, Buffer.from([0x05, 0x00])]), 'PKI-001'],
    ['absurd length', Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02, 0x01, 0x01]), 'PKI-004'],
    ['unknown status', Buffer.from([0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x09]), 'PKI-001'],
    ['an OCSP response', Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x01]), 'PKI-002'],
    ['a certificate', decodeInput(ca.ca.pem).der, 'PKI-002'],
    ['a PKCS#7 bag of certificates', file('certs.p7b'), 'PKI-002'],
    ['nested 3000 deep', deep, 'PKI-005'],
  ];
  for (const [name, bytes, code] of cases) {
    const started = performance.now();
    t.equal(codeOf(() => decodeTsp(bytes)), code, name);
    t.ok(performance.now() - started < 1000, `${name}: bounded time`);
  }
});

t.test('mutated queries, replies and tokens: a decoded object or a PKI problem, nothing else', async (t) => {
  for (const name of ['q1.tsq', 'r1.tsr', 'r3.tsr', 'token1.der']) {
    const bytes = file(name);
    assertOnlyProblems(decodeTsp, bytes, 3161);
  }
  t.pass('4 × 500 mutations');
});
