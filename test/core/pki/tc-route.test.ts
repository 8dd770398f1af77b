import t from 'tap';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { CA_EXT, LEAF_EXT, OpensslPki } from '../../helpers/openssl-pki.js';
import { importCa } from '../../helpers/pki-api.js';

interface Cf {
  pem: string;
  dn: string;
  issuerDn: string;
  selfSigned: boolean;
}

t.test('/api/v1/rfc5280/tc: the chain of a certificate in each order, completed from the imported CAs', async (t) => {
  const pki = new OpensslPki(tempDir(t, 'cw-pki-'));
  const root = pki.root('root', '/CN=TC Root');
  const int = pki.issue('int', '/CN=TC Issuing CA', root, { ext: CA_EXT });
  const leaf = pki.issue('leaf', '/CN=tc.example.com', int, { ext: [...LEAF_EXT, 'subjectAltName=DNS:tc.example.com,IP:10.0.0.7'] });
  // A hierarchy that is not imported: only a bundle can complete it.
  const otherRoot = pki.root('other-root', '/CN=Bundle Root');
  const otherInt = pki.issue('other-int', '/CN=Bundle Issuing CA', otherRoot, { ext: CA_EXT });
  const otherLeaf = pki.issue('other-leaf', '/CN=bundle.example.com', otherInt, { ext: LEAF_EXT });

  const kernel = await bootKernel(t);
  await importCa(kernel, { name: 'tc-root', certificate: root.pem, trusted: true });
  await importCa(kernel, { name: 'tc-int', certificate: int.pem });
  const headers = { host: 'localhost', ...ADMIN_HEADERS };
  const get = (pem: string, order?: string) =>
    kernel.app.inject({ url: `/api/v1/rfc5280/tc/${encodeURIComponent(pem)}${order ? `?order=${order}` : ''}`, headers });
  const dns = (body: unknown) => (body as Cf[]).map((c) => c.dn);

  await t.test('GET with the PEM percent-encoded in full (the Ansible call after each enrollment)', async (t) => {
    const res = await get(leaf.pem);
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers['content-type'], 'application/json', 'exactly application/json');
    const chain = res.json() as (Cf & Record<string, unknown>)[];
    t.same(dns(chain), ['CN=tc.example.com', 'CN=TC Issuing CA', 'CN=TC Root'], 'no order: leaf → root, completed from the imported CAs');
    t.equal(chain[0]!.pem.trim(), leaf.pem.trim());
    t.equal(chain[2]!.selfSigned, true, 'the root last (the issuer moves it to ca.crt)');
    t.match(chain[0], {
      issuerDn: 'CN=TC Issuing CA',
      serial: pki.serial(leaf),
      keyType: 'ec-secp256r1',
      signingAlgorithm: 'ecdsa-with-SHA256',
      selfSigned: false,
      sans: [{ sanType: 'DNSNAME', value: 'tc.example.com' }, { sanType: 'IPADDRESS', value: '10.0.0.7' }],
      dnElements: [{ element: 'cn.1', type: 'CN', value: 'tc.example.com' }],
      certificateThumbprint: /^[0-9a-f]{64}$/,
      certificateSHAOneThumbprint: /^[0-9a-f]{40}$/,
      publicKeyThumbprint: /^[0-9a-f]{64}$/,
      subjectKeyIdentifier: /^[0-9a-f]{40}$/,
      keyUsages: ['digitalSignature'],
      extendedKeyUsages: ['serverAuth', 'clientAuth'],
    });
    t.type(chain[0]!.notBefore, 'number');
    t.type(chain[0]!.notAfter, 'number');
    // Go's url.PathEscape leaves '+' and '=' as they are; some proxies encode twice.
    const goStyle = leaf.pem.replace(/[\n ]/g, (c) => (c === '\n' ? '%0A' : '%20')).replace(/\//g, '%2F');
    const viaGo = await kernel.app.inject({ url: `/api/v1/rfc5280/tc/${goStyle}?order=ltr`, headers });
    t.same(dns(viaGo.json()), dns(chain), 'Go PathEscape form');
    const twice = await kernel.app.inject({ url: `/api/v1/rfc5280/tc/${encodeURIComponent(encodeURIComponent(leaf.pem))}`, headers });
    t.same(dns(twice.json()), dns(chain), 'encoded twice');
  });

  await t.test('every order', async (t) => {
    const expected: Record<string, string[]> = {
      ltr: ['CN=tc.example.com', 'CN=TC Issuing CA', 'CN=TC Root'],
      rtl: ['CN=TC Root', 'CN=TC Issuing CA', 'CN=tc.example.com'],
      iltr: ['CN=TC Issuing CA', 'CN=TC Root'],
      irtl: ['CN=TC Root', 'CN=TC Issuing CA'],
    };
    for (const [order, want] of Object.entries(expected)) {
      const res = await get(leaf.pem, order);
      t.equal(res.statusCode, 200);
      t.same(dns(res.json()), want, `order=${order}`);
    }
    const bad = await get(leaf.pem, 'sideways');
    t.equal(bad.statusCode, 400);
    t.match(bad.json(), { error: 'HTTP-003' });
  });

  await t.test('POST: JSON {pem}, a PEM bundle as text/plain, DER, multipart field x509', async (t) => {
    const post = (payload: string | Buffer, contentType: string, order = '') =>
      kernel.app.inject({ method: 'POST', url: `/api/v1/rfc5280/tc${order}`, headers: { ...headers, 'content-type': contentType }, payload });
    const json = await post(JSON.stringify({ pem: leaf.pem }), 'application/json', '?order=rtl');
    t.equal(json.statusCode, 200, json.body);
    t.same(dns(json.json()), ['CN=TC Root', 'CN=TC Issuing CA', 'CN=tc.example.com']);

    // A bundle in any order: the leaf is the certificate that issued none of the others.
    const bundle = otherRoot.pem + otherLeaf.pem + otherInt.pem;
    const text = await post(bundle, 'text/plain');
    t.equal(text.statusCode, 200, text.body);
    t.same(dns(text.json()), ['CN=bundle.example.com', 'CN=Bundle Issuing CA', 'CN=Bundle Root'], 'a bundle completes a hierarchy that is not imported');

    const onlyLeaf = await post(otherLeaf.pem, 'application/x-pem-file');
    t.same(dns(onlyLeaf.json()), ['CN=bundle.example.com'], 'an issuer nowhere to be found: the chain is the leaf alone');

    const der = Buffer.from(leaf.pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    const raw = await post(der, 'application/pkix-cert', '?order=iltr');
    t.same(dns(raw.json()), ['CN=TC Issuing CA', 'CN=TC Root']);

    const boundary = '----certwright-test-boundary';
    const multipart = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="x509"; filename="cert.pem"\r\nContent-Type: application/octet-stream\r\n\r\n${leaf.pem}\r\n--${boundary}--\r\n`,
    );
    const form = await post(multipart, `multipart/form-data; boundary=${boundary}`, '?order=ltr');
    t.equal(form.statusCode, 200, form.body);
    t.same(dns(form.json()), ['CN=tc.example.com', 'CN=TC Issuing CA', 'CN=TC Root'], 'multipart x509 (v1 Go, MCP)');

    const empty = await post('{}', 'application/json');
    t.equal(empty.statusCode, 400);
    t.match(empty.json(), { error: 'HTTP-003' });
    const garbage = await post('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'text/plain');
    t.equal(garbage.statusCode, 400);
    t.match(garbage.json(), { error: 'PKI-001', message: 'Could not parse provided PEM' });
  });

  await t.test('authentication', async (t) => {
    const anonymous = await kernel.app.inject({ url: `/api/v1/rfc5280/tc/${encodeURIComponent(leaf.pem)}`, headers: { host: 'localhost' } });
    t.equal(anonymous.statusCode, 401);
    const anonymousPost = await kernel.app.inject({ method: 'POST', url: '/api/v1/rfc5280/tc', headers: { host: 'localhost', 'content-type': 'text/plain' }, payload: leaf.pem });
    t.equal(anonymousPost.statusCode, 401);
  });
});
