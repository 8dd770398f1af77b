import t from 'tap';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { CA_EXT, LEAF_EXT, OpensslPki } from '../../helpers/openssl-pki.js';
import { caller, createPrincipal } from '../../helpers/security.js';

t.test('CAs: import, read, update, delete; refused imports write nothing', async (t) => {
  const pki = new OpensslPki(tempDir(t, 'cw-pki-'));
  const root = pki.root('root', '/O=Certwright/CN=Import Root');
  const sub = pki.issue('sub', '/O=Certwright/CN=Import Sub CA', root, { ext: CA_EXT });
  const leaf = pki.issue('leaf', '/CN=leaf.example.com', sub, { ext: LEAF_EXT });
  const kernel = await bootKernel(t);
  const api = caller(kernel, ADMIN_HEADERS);
  const knex = kernel.db.knex;
  const count = async (table: string) => Number(((await knex(table).count({ n: '*' })) as { n: number | string }[])[0]!.n);

  const anonymous = await kernel.app.inject({ url: '/api/v1/cas/', headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401, 'no credentials: 401');
  t.match(anonymous.json(), { error: /^SEC-AUTH-00\d$/ });

  const created = await api('POST', '/api/v1/cas/', { name: 'root', certificate: root.pem, trusted: true, outdatedRevocationStatusPolicy: 'lastavailablestatus', public: true });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  const ca = created.json() as Record<string, unknown>;
  t.match(ca, {
    _id: /^[0-9a-f]{24}$/,
    name: 'root',
    trusted: true,
    trustedForServerAuthentication: true,
    trustedForClientAuthentication: false,
    dn: 'CN=Import Root,O=Certwright',
    issuer: 'CN=Import Root,O=Certwright',
    selfSigned: true,
    crlUrl: null,
    responderUrl: null,
    public: true,
    serial: pki.serial(root),
    subjectKeyIdentifier: /^[0-9a-f]{40}$/,
  });
  t.equal(String(ca.certificate).trim(), root.pem.trim(), 'the certificate is kept as PEM');

  // DER in base64 is a certificate too.
  const b64 = pki.root('b64', '/CN=Base64 Root');
  const derBase64 = b64.pem.replace(/-----[A-Z ]+-----|\s/g, '');
  const fromBase64 = await api('POST', '/api/v1/cas/', { name: 'b64', certificate: derBase64 });
  t.equal(fromBase64.statusCode, 201, fromBase64.body);
  t.match(fromBase64.json(), { dn: 'CN=Base64 Root', trusted: false, certificate: /^-----BEGIN CERTIFICATE-----\n/ });

  // Horizon's field names for the flags and the URLs.
  const second = await api('POST', '/api/v1/cas/', {
    name: 'sub',
    certificate: sub.pem,
    trustedForServerAuthentication: true,
    trustedForClientAuthentication: true,
    crlUrl: 'http://crl.example.com/sub.crl',
    responderUrl: 'http://ocsp.example.com/',
    refresh: '12 hours',
    timeout: '10 seconds',
  });
  t.equal(second.statusCode, 201, second.body);
  t.match(second.json(), { trusted: true, trustedForClientAuthentication: true, crlUrl: 'http://crl.example.com/sub.crl', responderUrl: 'http://ocsp.example.com/', refresh: '12 hours', timeout: '10 seconds' });

  const list = await api('GET', '/api/v1/cas/');
  t.same((list.json() as { name: string }[]).map((c) => c.name), ['b64', 'root', 'sub']);
  t.match((await api('GET', '/api/v1/cas/sub')).json(), { name: 'sub', issuer: 'CN=Import Root,O=Certwright' });
  t.match((await api('GET', '/api/v1/cas/nobody')).json(), { status: 404, error: 'CA-003' });

  await t.test('refused imports: 400 with a stable code, nothing written', async (t) => {
    const cas = await count('pki_cas');
    const events = await count('events');
    const garbage = '-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['garbage PEM', { name: 'x', certificate: garbage }, 'PKI-001', /^Could not parse provided PEM$/],
      ['not base64 either', { name: 'x', certificate: 'hello world' }, 'PKI-001', /Could not parse provided PEM/],
      ['an end-entity certificate', { name: 'x', certificate: leaf.pem }, 'CA-002', /"CN=leaf.example.com" is not a CA certificate: its basicConstraints say CA:FALSE/],
      ['two certificates at once', { name: 'x', certificate: root.pem + sub.pem }, 'CA-002', /2 PEM blocks/],
      ['a name taken', { name: 'root', certificate: sub.pem }, 'CA-004', /named "root" already exists/],
      ['a certificate imported under another name', { name: 'root-again', certificate: root.pem }, 'CA-004', /already imported as the certificate authority "root"/],
      ['a distribution point that is not http', { name: 'x', certificate: pki.root('x', '/CN=X').pem, crlUrl: 'ldap://dir.example.com/cn=x' }, 'CA-002', /crlUrl: only http and https/],
      ['a bad duration', { name: 'x', certificate: root.pem, refresh: 'soon' }, 'HTTP-003', /./],
      ['no certificate', { name: 'x' }, 'CA-002', /certificate: a CA certificate \(PEM\) is required/],
      ['an unknown field', { name: 'x', certificate: root.pem, colour: 'red' }, 'HTTP-003', /./],
    ];
    for (const [what, body, code, message] of cases) {
      const res = await api('POST', '/api/v1/cas/', body);
      t.equal(res.statusCode, 400, `${what}: 400`);
      t.equal(res.headers['content-type'], 'application/problem+json');
      t.match(res.json(), { error: code, message, status: 400 }, what);
    }
    t.equal(await count('pki_cas'), cas, 'no CA row written');
    t.equal(await count('events'), events, 'no event written');
  });

  await t.test('update: flags and URLs by name, rename by _id; a certificate of another kind is refused', async (t) => {
    const updated = await api('PUT', '/api/v1/cas/', { name: 'sub', trustedForClientAuthentication: false, crlUrl: null });
    t.equal(updated.statusCode, 200, updated.body);
    t.match(updated.json(), { name: 'sub', trusted: true, trustedForClientAuthentication: false, crlUrl: null, responderUrl: 'http://ocsp.example.com/', refresh: '12 hours' }, 'fields left out keep their value');
    const id = (updated.json() as { _id: string })._id;
    const renamed = await api('PUT', '/api/v1/cas/', { _id: id, name: 'issuing', certificate: sub.pem });
    t.equal(renamed.statusCode, 200, renamed.body);
    t.match(renamed.json(), { _id: id, name: 'issuing' });
    t.equal((await api('GET', '/api/v1/cas/sub')).statusCode, 404);
    const clash = await api('PUT', '/api/v1/cas/', { _id: id, name: 'root' });
    t.match(clash.json(), { status: 400, error: 'CA-004' });
    const leafAsCa = await api('PUT', '/api/v1/cas/', { name: 'issuing', certificate: leaf.pem });
    t.match(leafAsCa.json(), { status: 400, error: 'CA-002' });
    t.match((await api('PUT', '/api/v1/cas/', { name: 'nobody' })).json(), { status: 404, error: 'CA-003' });
  });

  await t.test('permissions: configuration:cas:read reads, write is needed to change', async (t) => {
    const reader = await createPrincipal(kernel, 'ca-reader', { permissions: [{ value: 'configuration:cas:read' }] });
    const asReader = caller(kernel, reader.headers);
    t.equal((await asReader('GET', '/api/v1/cas/')).statusCode, 200);
    t.match((await asReader('POST', '/api/v1/cas/', { name: 'y', certificate: root.pem })).json(), { status: 403, error: 'SEC-PERM-001' });
    t.match((await asReader('DELETE', '/api/v1/cas/root')).json(), { status: 403, error: 'SEC-PERM-001' });
  });

  await t.test('delete', async (t) => {
    const removed = await api('DELETE', '/api/v1/cas/issuing');
    t.equal(removed.statusCode, 204);
    t.equal((await api('GET', '/api/v1/cas/issuing')).statusCode, 404);
    t.match((await api('DELETE', '/api/v1/cas/issuing')).json(), { status: 404, error: 'CA-003' });
    const codes = (await knex('events').where({ module: 'pki', object_type: 'ca' }).orderBy('seq').select('code', 'object_id')) as { code: string; object_id: string }[];
    t.same(codes.map((e) => `${e.code} ${e.object_id}`), ['CA-CREATE root', 'CA-CREATE b64', 'CA-CREATE sub', 'CA-UPDATE sub', 'CA-UPDATE issuing', 'CA-DELETE issuing'], 'each change is an event');
  });
});
