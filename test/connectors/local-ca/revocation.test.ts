import { randomBytes } from 'node:crypto';
import type { IssueOutcome, RevocationSource, RevocationStatus, RevokedEntry } from '@certwright/sdk';
import t from 'tap';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { decodeOcsp, type OcspResponseInfo } from '../../../core/pki/ocsp/decode.js';
import { localCaKernel, serialOf, workbench } from './helpers.js';

const pemOf = (o: IssueOutcome): string => {
  if (o.status !== 'issued') throw new Error(`not issued: ${JSON.stringify(o)}`);
  return o.certificatePem;
};

/**
 * The contract's input as Certwright's inventory would give it: a plain object over a map of revoked serials
 * (everything else this CA issued is good, other serials unknown).
 */
function inventory(issued: Set<string>, revoked: Map<string, { revokedAt: number; reason?: string }>): RevocationSource & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async status(serial: string): Promise<RevocationStatus> {
      asked.push(serial);
      const r = revoked.get(serial);
      if (r) return { status: 'revoked', revokedAt: r.revokedAt, ...(r.reason ? { reason: r.reason } : {}) };
      return { status: issued.has(serial) ? 'good' : 'unknown' };
    },
    async revoked(): Promise<RevokedEntry[]> {
      return [...revoked].map(([serial, r]) => ({ serial, revokedAt: r.revokedAt, ...(r.reason ? { reason: r.reason } : {}) }));
    },
  };
}

t.test('CRL and OCSP through the connector, checked by openssl', async (t) => {
  const { make } = await localCaKernel(t);
  const bench = workbench(t);
  const ca = await make('ca-revocation', { crlValidityHours: 12, ocspValiditySeconds: 900 });
  const chain = await ca.getCaChain();
  bench.write('issuing.pem', chain[0]!);
  bench.write('root.pem', chain[1]!);
  bench.write('chain.pem', chain.join(''));
  const issue = async (cn: string): Promise<string> => pemOf(await ca.issue({ requestId: randomBytes(12).toString('hex'), csrPem: bench.csr(`/CN=${cn}`), profile: 'default' }));
  const good = await issue('good.example');
  const revoked = await issue('revoked.example');
  const held = await issue('held.example');
  bench.write('good.pem', good);
  bench.write('revoked.pem', revoked);
  bench.write('held.pem', held);
  const issued = new Set([good, revoked, held].map((p) => serialOf(bench, p)));
  const revokedAt = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const revocations = new Map<string, { revokedAt: number; reason?: string }>();
  const source = inventory(issued, revocations);

  await t.test('an empty CRL first, then the revoked certificates with their reasons; numbers increase', async (t) => {
    const empty = await ca.crl!(source);
    bench.write('empty.crl', empty);
    const emptyText = bench.verdict('crl', '-inform', 'DER', '-in', 'empty.crl', '-CAfile', 'chain.pem', '-verify', '-noout', '-text');
    t.match(emptyText, /verify OK/);
    t.match(emptyText, /No Revoked Certificates/);
    const first = decodeCrl(empty);
    t.equal(first.nextUpdate! - first.thisUpdate, 12 * 3_600_000, 'nextUpdate = thisUpdate + crlValidityHours');
    t.same(await ca.crl!(source), empty, 'unchanged list, fresh CRL: the same bytes');

    revocations.set(serialOf(bench, revoked), { revokedAt, reason: 'keyCompromise' });
    revocations.set(serialOf(bench, held), { revokedAt });
    const der = await ca.crl!(source);
    bench.write('ca.crl', der);
    const text = bench.verdict('crl', '-inform', 'DER', '-in', 'ca.crl', '-CAfile', 'chain.pem', '-verify', '-noout', '-text');
    t.match(text, /verify OK/);
    t.match(text, /X509v3 CRL Reason Code:\s*\n\s*Key Compromise/);
    const second = decodeCrl(der);
    t.ok(BigInt(second.crlNumber!) > BigInt(first.crlNumber!), `CRL number ${second.crlNumber} > ${first.crlNumber}`);
    t.same(second.entries.map((e) => e.serial).sort(), [serialOf(bench, revoked), serialOf(bench, held)].sort());
    t.equal(second.issuer, decodeCrl(der).issuer);

    // openssl's own revocation check with this CRL.
    bench.write('ca.crl.pem', bench.run('crl', '-inform', 'DER', '-in', 'ca.crl'));
    const check = (leaf: string): string => bench.verdict('verify', '-crl_check', '-CRLfile', 'ca.crl.pem', '-CAfile', 'root.pem', '-untrusted', 'issuing.pem', leaf);
    t.match(check('good.pem'), /good\.pem: OK/);
    t.match(check('revoked.pem'), /certificate revoked/);
    t.match(check('held.pem'), /certificate revoked/);

    // Another connector object of the instance (another node) continues the numbering.
    const again = await (await make('ca-revocation', { crlValidityHours: 12 })).crl!(source);
    t.ok(BigInt(decodeCrl(again).crlNumber!) > BigInt(second.crlNumber!));

    // Two nodes signing new CRLs at the same moment never share a number (the counter is kv.increment).
    const nodes = [ca, await make('ca-revocation', { crlValidityHours: 12 })];
    const lists = Array.from({ length: 8 }, (_, i) => inventory(issued, new Map([[(0xa0 + i).toString(16), { revokedAt }]])));
    const numbers = (await Promise.all(lists.map((list, i) => nodes[i % 2]!.crl!(list)))).map((der) => BigInt(decodeCrl(der).crlNumber!));
    t.equal(new Set(numbers).size, numbers.length, `${numbers.length} CRLs signed at once on two nodes, as many numbers: ${numbers.join(', ')}`);
    t.ok(numbers.every((n) => n > BigInt(decodeCrl(again).crlNumber!)), 'all after the earlier ones');
  });

  await t.test('OCSP: openssl asks, the connector answers good / revoked, openssl verifies', async (t) => {
    for (const digest of ['-sha1', '-sha256']) {
      source.asked.length = 0;
      bench.verdict('ocsp', digest, '-issuer', 'issuing.pem', '-cert', 'good.pem', '-cert', 'revoked.pem', '-reqout', 'req.der');
      const response = await ca.ocsp!(bench.read('req.der'), source);
      bench.write('resp.der', response);
      // -reqin: openssl also checks that the nonce it sent is answered.
      const out = bench.verdict('ocsp', '-respin', 'resp.der', '-reqin', 'req.der', '-CAfile', 'root.pem', '-resp_text');
      t.match(out, /Response verify OK/, digest);
      t.match(out, /OCSP Nonce:/);
      const summary = bench.verdict('ocsp', '-respin', 'resp.der', '-CAfile', 'root.pem', '-issuer', 'issuing.pem', digest, '-cert', 'good.pem', '-cert', 'revoked.pem', '-no_nonce');
      t.match(summary, /Response verify OK/);
      t.match(summary, /good\.pem: good/);
      t.match(summary, /revoked\.pem: revoked\n[\s\S]*?Reason: keyCompromise/);
      const decoded = decodeOcsp(response) as OcspResponseInfo;
      t.equal(decoded.signatureValid, true);
      t.equal(decoded.responses![0]!.nextUpdate! - decoded.responses![0]!.thisUpdate, 900_000, 'ocspValiditySeconds');
      t.same(source.asked.sort(), [serialOf(bench, good), serialOf(bench, revoked)].sort());
    }
  });

  await t.test('OCSP: a certificate of another CA is unknown without asking; a malformed request is malformedRequest', async (t) => {
    const stranger = await make('ca-stranger');
    bench.write('stranger-issuing.pem', (await stranger.getCaChain())[0]!);
    bench.write('stranger.pem', pemOf(await stranger.issue({ requestId: randomBytes(12).toString('hex'), csrPem: bench.csr('/CN=stranger.example'), profile: 'default' })));
    source.asked.length = 0;
    bench.verdict('ocsp', '-issuer', 'stranger-issuing.pem', '-cert', 'stranger.pem', '-reqout', 'stranger.der');
    const response = await ca.ocsp!(bench.read('stranger.der'), source);
    bench.write('stranger-resp.der', response);
    t.match(bench.verdict('ocsp', '-respin', 'stranger-resp.der', '-resp_text', '-noverify'), /Cert Status: unknown/);
    t.same(source.asked, []);
    t.equal((decodeOcsp(await ca.ocsp!(Buffer.from('nonsense'), source)) as OcspResponseInfo).responseStatus, 'malformedRequest');
  });
});
