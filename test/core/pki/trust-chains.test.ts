import t from 'tap';
import type { ChainResult } from '../../../core/pki/trust/model.js';
import type { TrustTreeNode } from '../../../core/pki/trust/service.js';
import { decodeInput } from '../../../core/pki/input.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { CA_EXT, LEAF_EXT, OpensslPki, type Made } from '../../helpers/openssl-pki.js';
import { importCa, servicesOf } from '../../helpers/pki-api.js';

const der = (m: Made) => decodeInput(m.pem).der;
const codes = (r: ChainResult) => r.path.map((l) => l.problems.map((p) => p.code));
const dns = (r: ChainResult) => r.path.map((l) => l.certificate.dn);

t.test('trust chains over imported CAs: issuer choice, loops, and why a path fails', async (t) => {
  const pki = new OpensslPki(tempDir(t, 'cw-pki-'));
  const root = pki.root('root', '/O=Certwright/CN=Test Root');
  // Two intermediates with one subject name and two keys.
  const a1 = pki.issue('a1', '/O=Certwright/CN=Issuing CA', root, { ext: CA_EXT });
  const a2 = pki.issue('a2', '/O=Certwright/CN=Issuing CA', root, { ext: CA_EXT });
  const leafAki = pki.issue('leaf-aki', '/CN=aki.example.com', a2, { ext: [...LEAF_EXT, 'subjectAltName=DNS:aki.example.com'] });
  // No AKI: only the signature can tell which "Issuing CA" signed it.
  const noAkiExt = LEAF_EXT.filter((e) => !e.startsWith('authorityKeyIdentifier'));
  const leafNoAki = pki.issue('leaf-noaki', '/CN=noaki.example.com', a2, { ext: [...noAkiExt, 'subjectAltName=DNS:noaki.example.com'] });
  // A cross-signed pair: X issued under Y's name and key, Y under X's (from throwaway self-signed twins).
  const kx = pki.key('kx');
  const ky = pki.key('ky');
  const x0 = pki.root('x0', '/CN=Cross X', { keyPath: kx });
  const y0 = pki.root('y0', '/CN=Cross Y', { keyPath: ky });
  const crossX = pki.issue('cross-x', '/CN=Cross X', y0, { ext: CA_EXT, keyPath: kx });
  const crossY = pki.issue('cross-y', '/CN=Cross Y', x0, { ext: CA_EXT, keyPath: ky });
  // Expired intermediate.
  const expired = pki.issue('expired', '/O=Certwright/CN=Expired CA', root, { ext: CA_EXT, start: '20200101000000Z', end: '20210101000000Z' });
  const leafExpired = pki.issue('leaf-expired', '/CN=old.example.com', expired, { ext: LEAF_EXT, start: '20200601000000Z', end: '20300101000000Z' });
  // An end-entity certificate used as an issuer.
  const notCa = pki.issue('not-ca', '/O=Certwright/CN=Not A CA', root, { ext: LEAF_EXT });
  const leafOfNotCa = pki.issue('leaf-of-not-ca', '/CN=sub.example.com', notCa, { ext: LEAF_EXT });
  // pathlen:0 with a CA below it.
  const p0 = pki.issue('p0', '/O=Certwright/CN=Pathlen Zero CA', root, { ext: ['basicConstraints=critical,CA:TRUE,pathlen:0', ...CA_EXT.slice(1)] });
  const p1 = pki.issue('p1', '/O=Certwright/CN=Below Pathlen CA', p0, { ext: CA_EXT });
  const leafP = pki.issue('leaf-p', '/CN=deep.example.com', p1, { ext: LEAF_EXT });
  // Name constraints: DNS, IP and email.
  const nc = pki.issue('nc', '/O=Certwright/CN=Constrained CA', root, {
    ext: [...CA_EXT, 'nameConstraints=critical,permitted;DNS:example.com,permitted;IP:10.0.0.0/255.0.0.0,permitted;email:example.com,excluded;DNS:secret.example.com'],
  });
  const ncGood = pki.issue('nc-good', '/CN=www.example.com', nc, { ext: [...LEAF_EXT, 'subjectAltName=DNS:www.example.com,IP:10.1.2.3,email:ops@example.com'] });
  const ncBad = pki.issue('nc-bad', '/CN=www.evil.org', nc, { ext: [...LEAF_EXT, 'subjectAltName=DNS:www.evil.org,IP:192.168.1.1,email:ops@evil.org,DNS:x.secret.example.com'] });

  const kernel = await bootKernel(t);
  const { trust } = servicesOf(kernel);
  await importCa(kernel, { name: 'root', certificate: root.pem, trusted: true });
  for (const [name, made] of [['issuing-1', a1], ['issuing-2', a2], ['cross-x', crossX], ['cross-y', crossY], ['expired', expired], ['pathlen-0', p0], ['below-pathlen', p1], ['constrained', nc]] as const) {
    await importCa(kernel, { name, certificate: made.pem });
  }

  await t.test('the issuer among two CAs of one name is the one whose key signed (AKI/SKI, then signature)', async (t) => {
    for (const leaf of [leafAki, leafNoAki]) {
      const chain = await trust.chainFor('default', der(leaf));
      t.ok(chain.valid, `${leaf.name}: valid (${JSON.stringify(codes(chain))})`);
      t.same(chain.path.map((l) => l.ca), [null, 'issuing-2', 'root'], `${leaf.name}: leaf → issuing-2 → root`);
      t.equal(chain.path[1]!.certificate.pem.trim(), a2.pem.trim(), 'the intermediate is the one with the second key');
      t.equal(chain.anchor, 'root');
      const openssl = pki.verify(leaf, root, [a1, a2]);
      t.ok(openssl.ok, `openssl verify agrees: ${openssl.output.trim()}`);
    }
  });

  await t.test('cross-signed CAs that issue each other: the loop is detected and reported, not followed', async (t) => {
    const started = Date.now();
    const chain = await trust.chainFor('default', der(crossX));
    t.ok(Date.now() - started < 2000, 'answers at once');
    t.same(dns(chain), ['CN=Cross X', 'CN=Cross Y'], 'the path stops where the loop closes');
    t.same(codes(chain), [[], ['loop', 'untrusted']]);
    t.match(chain.path[1]!.problems[0]!.message, /"CN=Cross X" \(CA "cross-x"\) is already in the path/);
    t.notOk(chain.valid);
  });

  await t.test('an expired intermediate', async (t) => {
    const chain = await trust.chainFor('default', der(leafExpired));
    t.same(codes(chain), [[], ['expired'], []]);
    t.match(chain.path[1]!.problems[0]!.message, /"CN=Expired CA,O=Certwright" expired on 2021-01-01T00:00:00.000Z/);
    t.notOk(chain.valid);
    const openssl = pki.verify(leafExpired, root, [expired]);
    t.notOk(openssl.ok, 'openssl refuses it too');
    t.match(openssl.output, /expired/);
  });

  await t.test('a leaf issued by a certificate that is not a CA (CA:FALSE), given in the bundle', async (t) => {
    const chain = await trust.chainFor('default', der(leafOfNotCa), [der(notCa)]);
    t.same(codes(chain), [[], ['not-ca', 'key-usage'], []]);
    t.match(chain.path[1]!.problems[0]!.message, /"CN=Not A CA,O=Certwright" is not a CA \(basicConstraints CA:FALSE\) but issued "CN=sub.example.com"/);
    const openssl = pki.verify(leafOfNotCa, root, [notCa]);
    t.notOk(openssl.ok);
    t.match(openssl.output, /invalid CA certificate/);
  });

  await t.test('a CA below a pathlen:0 CA', async (t) => {
    const chain = await trust.chainFor('default', der(leafP));
    t.same(chain.path.map((l) => l.ca), [null, 'below-pathlen', 'pathlen-0', 'root']);
    t.same(codes(chain), [[], [], ['path-length'], []]);
    t.match(chain.path[2]!.problems[0]!.message, /allows 0 intermediate CA\(s\) below it \(pathlen:0\) and 1 follow it/);
    const openssl = pki.verify(leafP, root, [p0, p1]);
    t.notOk(openssl.ok);
    t.match(openssl.output, /path length constraint exceeded/);
  });

  await t.test('name constraints (DNS, IP, email; permitted and excluded subtrees)', async (t) => {
    const good = await trust.chainFor('default', der(ncGood));
    t.ok(good.valid, 'names inside the permitted subtrees');
    t.ok(pki.verify(ncGood, root, [nc]).ok, 'openssl verify agrees');
    const bad = await trust.chainFor('default', der(ncBad));
    const messages = bad.path[0]!.problems.map((p) => `${p.code}: ${p.message}`);
    t.match(messages, [
      /^name-constraints: DNS name "www.evil.org" is outside the permitted subtrees of "CN=Constrained CA,O=Certwright" \(example.com\)/,
      /^name-constraints: IP address "192.168.1.1" is outside the permitted subtrees .*\(10.0.0.0\/8\)/,
      /^name-constraints: email address "ops@evil.org" is outside the permitted subtrees/,
      /^name-constraints: DNS name "x.secret.example.com" is in the excluded subtree "secret.example.com"/,
    ]);
    t.equal(messages.length, 4);
    const openssl = pki.verify(ncBad, root, [nc]);
    t.notOk(openssl.ok);
    t.match(openssl.output, /subtree violation/);
  });

  await t.test('GET /api/v1/trustchains/: the CA forest with each CA\'s path and problems', async (t) => {
    const anonymous = await kernel.app.inject({ url: '/api/v1/trustchains/', headers: { host: 'localhost' } });
    t.equal(anonymous.statusCode, 401, 'no credentials: 401');
    const res = await kernel.app.inject({ url: '/api/v1/trustchains/', headers: { host: 'localhost', ...ADMIN_HEADERS } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['content-type'], 'application/json');
    const forest = res.json() as TrustTreeNode[];
    const names = (nodes: TrustTreeNode[]) => nodes.map((n) => n.ca.name);
    t.same(names(forest), ['cross-x', 'root'], 'the loop pair has no root: the first of it is a top');
    const [cross, rootNode] = forest as [TrustTreeNode, TrustTreeNode];
    t.same(names(cross.subordinates), ['cross-y']);
    t.same(cross.path.map((p) => p.problems.map((x) => x.code)), [[], ['loop', 'untrusted']]);
    t.same(names(rootNode.subordinates), ['constrained', 'expired', 'issuing-1', 'issuing-2', 'pathlen-0']);
    t.ok(rootNode.valid && rootNode.trusted && rootNode.complete, 'the trusted root is valid');
    t.equal(rootNode.ca.certificate.trim(), root.pem.trim());
    const byName = (nodes: TrustTreeNode[], name: string): TrustTreeNode => nodes.find((n) => n.ca.name === name)!;
    const expiredNode = byName(rootNode.subordinates, 'expired');
    t.notOk(expiredNode.valid);
    t.same(expiredNode.path.map((p) => p.problems.map((x) => x.code)), [['expired'], []]);
    const below = byName(byName(rootNode.subordinates, 'pathlen-0').subordinates, 'below-pathlen');
    t.same(below.path.map((p) => p.ca), ['below-pathlen', 'pathlen-0', 'root']);
    // A CA right below pathlen:0 is one intermediate too many only once something is issued below it.
    t.ok(below.valid, 'the pathlen:0 CA may issue a CA certificate; only paths through it to a leaf break');

    const one = await kernel.app.inject({ url: '/api/v1/trustchains/pathlen-0', headers: { host: 'localhost', ...ADMIN_HEADERS } });
    t.equal(one.statusCode, 200);
    t.same(names((one.json() as TrustTreeNode).subordinates), ['below-pathlen'], 'GET :anchor is the tree under that CA');
    const missing = await kernel.app.inject({ url: '/api/v1/trustchains/nobody', headers: { host: 'localhost', ...ADMIN_HEADERS } });
    t.equal(missing.statusCode, 404);
    t.match(missing.json(), { error: 'TC-003' });
  });

  await t.test('client authentication: the issuing CA must be flagged trusted for it', async (t) => {
    const before = await trust.forClientAuth('default', der(leafAki));
    t.notOk(before.accepted, 'issuing-2 is not trusted for client authentication');
    t.equal(before.ca, 'issuing-2');
    const res = await kernel.app.inject({
      method: 'PUT',
      url: '/api/v1/cas/',
      headers: { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS },
      payload: JSON.stringify({ name: 'issuing-2', trustedForClientAuthentication: true }),
    });
    t.equal(res.statusCode, 200);
    const after = await trust.forClientAuth('default', der(leafAki));
    t.ok(after.accepted, 'accepted once the flag is set');
    t.equal(after.chain.anchor, 'issuing-2');
    t.notOk((await trust.forClientAuth('default', der(leafExpired))).accepted, 'another CA: refused');
  });

  await t.test('a root that is not flagged trusted makes the path untrusted', async (t) => {
    const other = pki.root('other-root', '/CN=Other Root');
    const leaf = pki.issue('other-leaf', '/CN=other.example.com', other, { ext: LEAF_EXT });
    await importCa(kernel, { name: 'other-root', certificate: other.pem });
    const chain = await trust.chainFor('default', der(leaf));
    t.ok(chain.complete);
    t.notOk(chain.trusted);
    t.same(codes(chain), [[], ['untrusted']]);
    t.match(chain.path[1]!.problems[0]!.message, /the root "CN=Other Root" is not flagged trusted/);
    const incomplete = await trust.chainFor('default', der(pki.issue('orphan', '/CN=orphan.example.com', pki.root('unknown-root', '/CN=Unknown Root'), { ext: LEAF_EXT })));
    t.same(codes(incomplete), [['incomplete', 'untrusted']]);
    t.match(incomplete.path[0]!.problems[0]!.message, /its issuer "CN=Unknown Root" is not among the imported CAs/);
  });
});
