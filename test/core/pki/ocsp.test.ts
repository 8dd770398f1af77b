import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { decodeInput } from '../../../core/pki/input.js';
import { decodeOcsp, type OcspRequestInfo, type OcspResponseInfo } from '../../../core/pki/ocsp/decode.js';
import { fieldsOf, ocspTool, serialOf, onelineToRfc4514, openssl, opensslTime, smallCa, verdict } from '../../helpers/pki-tools.js';
import { assertOnlyProblems } from '../../helpers/mutations.js';

const ca = smallCa(t);
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof ProblemError ? err.code : `not a ProblemError: ${String(err)}`;
  }
  return 'no error';
};

/** The Certificate ID blocks of openssl ocsp -text, as decoded CertIDs (first of each field per block). */
function certIds(text: string) {
  return text
    .split('Certificate ID:')
    .slice(1)
    .map((block) => {
      const field = (label: string) => fieldsOf(block, label)[0]!;
      return {
        hashAlgorithm: field('Hash Algorithm'),
        issuerNameHash: field('Issuer Name Hash').toLowerCase(),
        issuerKeyHash: field('Issuer Key Hash').toLowerCase(),
        serial: field('Serial Number').toLowerCase(),
      };
    });
}

/** openssl prints the nonce extension's value: the OCTET STRING wrapping (04 len) then the nonce. */
const opensslNonce = (text: string): string | undefined => {
  const m = /OCSP Nonce: *\n\s*([0-9A-F]+)/.exec(text);
  return m ? m[1]!.slice(4).toLowerCase() : undefined;
};

t.test('requests: every field as openssl ocsp -reqin -text prints it', async (t) => {
  const plain = ocspTool(ca, 'plain.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-cert', 'revoked.pem', '-serial', '0x1003', '-no_nonce');
  const withNonce = ocspTool(ca, 'nonce.req', '-issuer', 'ca.pem', '-cert', 'good.pem');
  for (const [name, bytes] of [['without nonce', plain], ['with nonce', withNonce]] as const) {
    const text = openssl(ca.dir, 'ocsp', '-reqin', name === 'with nonce' ? 'nonce.req' : 'plain.req', '-text');
    const info = decodeOcsp(bytes) as OcspRequestInfo;
    t.equal(info.kind, 'request', `${name}: detected as a request`);
    t.equal(`${info.version} (0x${info.version - 1})`, fieldsOf(text, 'Version')[0], `${name}: version`);
    t.same(info.requests, certIds(text), `${name}: every CertID`);
    t.equal(info.nonce, opensslNonce(text), `${name}: nonce`);
    t.equal(info.signed, false);
    t.equal(info.requestor, undefined);
  }
  t.same(
    (decodeOcsp(plain) as OcspRequestInfo).requests.map((r) => r.serial),
    [serialOf(ca.good), serialOf(ca.revoked), '1003'],
  );
});

t.test('a signed request: requestor, algorithm, certificate and signature', async (t) => {
  const bytes = ocspTool(ca, 'signed.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-signer', 'good.pem', '-signkey', 'good.key');
  const text = openssl(ca.dir, 'ocsp', '-reqin', 'signed.req', '-text');
  const info = decodeOcsp(bytes) as OcspRequestInfo;
  t.equal(info.signed, true);
  t.equal(info.requestor, onelineToRfc4514(fieldsOf(text, 'Requestor Name')[0]!.replace(/^DirName:/, '')));
  t.equal(info.signingAlgorithm, fieldsOf(text, 'Signature Algorithm')[0]);
  t.same(info.requests, certIds(text).slice(0, 1));
  t.equal(info.nonce, opensslNonce(text));
  t.equal(info.certificates?.length, 1);
  t.equal(info.certificates?.[0]?.serial, serialOf(ca.good));
  t.equal(info.signatureValid, true);
});

/** Compares a decoded basic response with openssl ocsp -respin -text, field by field. */
function compareResponse(t: Test, info: OcspResponseInfo, text: string) {
  t.equal(info.kind, 'response');
  t.equal(`${info.responseStatus} (0x0)`, fieldsOf(text, 'OCSP Response Status')[0]);
  t.equal(fieldsOf(text, 'Response Type')[0], 'Basic OCSP Response');
  t.equal(info.responseType, 'basic');
  t.equal(`${info.version} (0x${info.version! - 1})`, fieldsOf(text, 'Version')[0]);
  const responder = fieldsOf(text, 'Responder Id')[0]!;
  t.same(info.responderId, /^[0-9A-F]{40}$/.test(responder) ? { keyHash: responder.toLowerCase() } : { dn: onelineToRfc4514(responder) }, 'responder id');
  t.equal(info.producedAt, opensslTime(fieldsOf(text, 'Produced At')[0]!));
  const statuses = fieldsOf(text, 'Cert Status');
  const thisUpdates = fieldsOf(text, 'This Update').map(opensslTime);
  const nextUpdates = fieldsOf(text, 'Next Update').map(opensslTime);
  const revocationTimes = fieldsOf(text, 'Revocation Time').map(opensslTime);
  const reasons = fieldsOf(text, 'Revocation Reason').map((r) => r.replace(/ \(0x[0-9a-f]+\)$/, ''));
  let revoked = 0;
  const expected = certIds(text).map((id, i) => {
    const single: Record<string, unknown> = { ...id, certStatus: statuses[i], thisUpdate: thisUpdates[i] };
    if (statuses[i] === 'revoked') Object.assign(single, { revocationTime: revocationTimes[revoked], revocationReason: reasons[revoked++] });
    if (nextUpdates[i] !== undefined) single.nextUpdate = nextUpdates[i];
    return single;
  });
  t.same(info.responses, expected, 'every single response');
  t.equal(info.nonce, opensslNonce(text), 'nonce');
  t.equal(info.signingAlgorithm, fieldsOf(text, 'Signature Algorithm')[0]);
}

t.test('responses: statuses good, revoked (time, reason) and unknown, as openssl ocsp -respin -text prints them', async (t) => {
  const index = ['-index', 'ca-db/index.txt', '-CA', 'ca.pem', '-ndays', '1'];
  const byCa = ['-reqin', 'plain.req', ...index, '-rsigner', 'ca.pem', '-rkey', 'ca.key'];
  const byResponder = ['-reqin', 'nonce.req', ...index, '-rsigner', 'responder.pem', '-rkey', 'responder.key'];
  ocspTool(ca, 'plain.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-cert', 'revoked.pem', '-serial', '0x1003', '-no_nonce');
  ocspTool(ca, 'nonce.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-cert', 'revoked.pem', '-serial', '0x1003');
  const cases = [
    { name: 'by the CA (ECDSA), by name', out: 'name.resp', args: byCa, signer: ca.ca },
    { name: 'by the CA, by key hash', out: 'key.resp', args: [...byCa, '-resp_key_id'], signer: ca.ca },
    { name: 'by the CA, by key hash, no certificates', out: 'bare.resp', args: [...byCa, '-resp_key_id', '-resp_no_certs'], signer: undefined },
    { name: 'by a delegated RSA responder, nonce echoed', out: 'delegated.resp', args: byResponder, signer: ca.responder },
    { name: 'by a delegated responder with RSA-PSS', out: 'pss.resp', args: [...byResponder, '-rsigopt', 'rsa_padding_mode:pss', '-resp_key_id'], signer: ca.responder },
  ];
  for (const c of cases) {
    const bytes = ocspTool(ca, c.out, ...c.args);
    const text = openssl(ca.dir, 'ocsp', '-respin', c.out, '-text', '-noverify');
    const info = decodeOcsp(bytes) as OcspResponseInfo;
    t.test(c.name, async (t) => {
      compareResponse(t, info, text);
      t.same(info.responses?.map((r) => r.certStatus), ['good', 'revoked', 'unknown']);
      t.same(info.responses?.map((r) => r.serial), [serialOf(ca.good), serialOf(ca.revoked), '1003']);
      if (c.signer) {
        const signer = openssl(ca.dir, 'x509', '-in', c.signer.certPath, '-noout', '-subject', '-nameopt', 'RFC2253');
        t.equal(info.certificates?.length, 1);
        t.equal(info.certificates![0]!.serial, serialOf(c.signer), 'embedded certificate decoded (serial)');
        t.equal(info.certificates![0]!.dn, /subject=(.*)/.exec(signer)![1], 'embedded certificate decoded (dn)');
        t.match(verdict(ca.dir, 'openssl', ['ocsp', '-respin', c.out, '-CAfile', 'ca.pem', '-no_nonce']), /Response verify OK/, 'openssl verifies it');
        t.equal(info.signatureValid, true, 'signature verifies with the embedded responder certificate');
      } else {
        t.same(info.certificates, []);
        t.equal(info.signatureValid, null, 'nothing to verify with');
      }
    });
  }
});

t.test('a response altered after signing has signatureValid false', async (t) => {
  const bytes = Buffer.from(readFileSync(join(ca.dir, 'name.resp')));
  // producedAt is the first GeneralizedTime (tag 0x18, 15 bytes): change its year's last digit.
  const at = bytes.indexOf(Buffer.from([0x18, 0x0f]));
  bytes[at + 5] = bytes[at + 5] === 0x39 ? 0x38 : bytes[at + 5]! + 1;
  writeFileSync(join(ca.dir, 'altered.resp'), bytes);
  const info = decodeOcsp(bytes) as OcspResponseInfo;
  t.equal(info.signatureValid, false);
  t.equal(info.producedAt, opensslTime(fieldsOf(openssl(ca.dir, 'ocsp', '-respin', 'altered.resp', '-text', '-noverify'), 'Produced At')[0]!));
  const refused = verdict(ca.dir, 'openssl', ['ocsp', '-respin', 'altered.resp', '-CAfile', 'ca.pem', '-no_nonce']);
  t.match(refused, /Response Verify Failure/, 'openssl refuses it too');
});

t.test('unsuccessful statuses carry only the status', async (t) => {
  for (const code of [1, 2, 3, 5, 6]) {
    const bytes = Uint8Array.from([0x30, 0x03, 0x0a, 0x01, code]);
    writeFileSync(join(ca.dir, `status${code}.resp`), bytes);
    // openssl prints the status, then exits non-zero for a response that is not successful.
    const text = verdict(ca.dir, 'openssl', ['ocsp', '-respin', `status${code}.resp`, '-text', '-noverify']);
    const info = decodeOcsp(bytes) as OcspResponseInfo;
    const printed = /Responder Error: (\w+) \((\d)\)/.exec(text)!;
    t.equal(printed[2], String(code));
    t.same(info, { kind: 'response', responseStatus: info.responseStatus }, `status ${code}: nothing else`);
    t.equal(info.responseStatus.toLowerCase(), printed[1], `status ${code}: named as openssl names it (it prints lower case)`);
  }
});

t.test('bad input: a specific PKI code, quickly', async (t) => {
  const response = readFileSync(join(ca.dir, 'name.resp'));
  const deep = Buffer.concat([...Array.from({ length: 5000 }, (_, i) => Buffer.from([0x30, 0x82, ((5000 - i - 1) * 4) >> 8, ((5000 - i - 1) * 4) & 0xff]))]);
  const cases: [string, Uint8Array, string][] = [
    ['truncated', response.subarray(0, response.length - 10), 'PKI-001'],
    ['garbage', Buffer.from('this is not DER at all'), 'PKI-001'],
    ['empty', new Uint8Array(0), 'PKI-001'],
    ['trailing bytes', Buffer.concat([response, Buffer.from([0, 0])]), 'PKI-001'],
    // A length claiming gigabytes is "too large", as in the X.509 decoder; one merely past the end is unreadable.
    ['absurd length', Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x0a, 0x01, 0x00]), 'PKI-004'],
    ['length past the end', Buffer.from([0x30, 0x83, 0x01, 0x00, 0x00, 0x0a, 0x01, 0x00]), 'PKI-001'],
    ['unknown response status', Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x09]), 'PKI-001'],
    ['successful without a response', Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x00]), 'PKI-001'],
    ['a certificate', decodeInput(ca.ca.pem).der, 'PKI-002'],
    ['an INTEGER', Buffer.from([0x02, 0x01, 0x05]), 'PKI-002'],
    ['nested 5000 deep', deep, 'PKI-005'],
  ];
  for (const [name, bytes, code] of cases) {
    const started = performance.now();
    t.equal(codeOf(() => decodeOcsp(bytes)), code, name);
    t.ok(performance.now() - started < 1000, `${name}: bounded time`);
  }
});

t.test('mutated requests and responses: a decoded object or a PKI problem, nothing else', async (t) => {
  for (const name of ['plain.req', 'signed.req', 'name.resp', 'delegated.resp']) {
    const bytes = readFileSync(join(ca.dir, name));
    assertOnlyProblems(decodeOcsp, bytes, 6960);
  }
  t.pass('4 × 500 mutations');
});
