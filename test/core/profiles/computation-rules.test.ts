/**
 * Computation rules on profile elements (issue 30 item 5): a profile's subject element, SAN type, label, owner,
 * team or contact email computes its value from the request when it is submitted, in both the Certwright and
 * the Horizon form of the profile; a rule that does not parse is refused when the profile is saved, and one
 * that fails on a request refuses the request with its position. SQLite and (TEST_DATABASE_URL) MariaDB.
 */
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { csrFor } from '../../helpers/csr.js';
import { startHttpSource } from '../datasources/http-source.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const admin = caller(kernel, ADMIN_HEADERS);

async function createProfile(name: string, parts: Json): Promise<{ statusCode: number; json(): Json }> {
  const base = (await admin('GET', '/api/v1/certificate/profiles/default')).json() as Json;
  for (const k of ['_id', 'createdAt', 'updatedAt', 'authorizationLevels', 'selfPermissions', 'certificateTemplate', 'cryptoPolicy', 'requestsPolicy', 'version']) delete base[k];
  return admin('POST', '/api/v1/certificate/profiles/', { ...base, name, ...parts });
}

const rules = {
  subject: [
    { element: 'cn.1', editable: false, mandatory: true, computationRule: 'Lower({{csr.subject.cn}})' },
    { element: 'ou.1', editable: false, computationRule: 'Concat("team-", OrElse({{template.team}}, "none"))' },
  ],
  sans: [{ type: 'DNSNAME', editable: false, min: 1, max: 5, computationRule: 'Unique(Replace([[csr.san.dnsname]], "example.com", "example.internal"))' }],
  owner: { editable: false, computationRule: '{{requester.identifier}}' },
  team: { editable: true },
};

t.test('a profile stores its rules and answers them in both forms', async (t) => {
  const res = await createProfile('computed', rules);
  t.equal(res.statusCode, 201, JSON.stringify(res.json()).slice(0, 300));
  const got = (await admin('GET', '/api/v1/certificate/profiles/computed')).json() as Json;
  t.equal(got.subject[0].computationRule, 'Lower({{csr.subject.cn}})', 'Certwright form');
  t.equal(got.owner.computationRule, '{{requester.identifier}}');
  t.notOk('computationRule' in got.labels, 'an element without a rule has none');
  t.equal(got.certificateTemplate.subject[0].computationRule, 'Lower({{csr.subject.cn}})', 'Horizon form');
  t.equal(got.certificateTemplate.sans[0].computationRule, rules.sans[0]!.computationRule);

  // The Horizon form takes them too (a client that only speaks it).
  const horizon = structuredClone(got);
  horizon.certificateTemplate.subject[0].computationRule = 'Upper({{csr.subject.cn}})';
  for (const k of ['_id', 'createdAt', 'updatedAt', 'subject', 'sans', 'labels', 'owner', 'team', 'contactEmail']) delete horizon[k];
  const put = await admin('PUT', '/api/v1/certificate/profiles/', horizon);
  t.equal(put.statusCode, 200, JSON.stringify(put.json()).slice(0, 300));
  t.equal(((await admin('GET', '/api/v1/certificate/profiles/computed')).json() as Json).subject[0].computationRule, 'Upper({{csr.subject.cn}})', 'changed through the Horizon form');
  const back = structuredClone(got);
  for (const k of ['_id', 'createdAt', 'updatedAt', 'certificateTemplate', 'authorizationLevels', 'selfPermissions', 'cryptoPolicy', 'requestsPolicy', 'version']) delete back[k];
  t.equal((await admin('PUT', '/api/v1/certificate/profiles/', back)).statusCode, 200, 'and back through the Certwright form');
});

t.test('a rule that does not parse is refused when the profile is saved', async (t) => {
  const res = await createProfile('broken-rule', { subject: [{ element: 'cn.1', computationRule: 'Lower({{csr.subject.cn}}' }] });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error, 'PRF-002');
  t.match(res.json().detail, /subject\[0\] \(cn\.1\)\.computationRule: .*line 1, column \d+/, 'names the element and the position');
  const horizon = await createProfile('broken-horizon', { certificateTemplate: { subject: [{ type: 'CN', computationRule: 'Nope(' }] } });
  t.equal(horizon.statusCode, 400, 'the Horizon form too');
  t.match(horizon.json().detail, /computationRule/);
  t.equal((await admin('GET', '/api/v1/certificate/profiles/broken-rule')).statusCode, 404, 'nothing saved');
});

t.test('submit: the rules compute the subject, the SANs and the owner', async (t) => {
  const res = await admin('POST', '/api/v1/requests/submit', {
    module: 'webra',
    workflow: 'enroll',
    profile: 'computed',
    template: { csr: csrFor('WWW.Example.COM', ['www.example.com', 'api.example.com']), team: { value: 'web' } },
  });
  t.equal(res.statusCode, 201, JSON.stringify(res.json()).slice(0, 400));
  const cert = res.json().certificate as Json;
  t.equal(cert.dn, 'CN=www.example.com,OU=team-web', 'cn computed from the CSR (Lower), ou from the submitted team');
  t.same(
    (cert.subjectAlternateNames as { sanType: string; value: string }[]).map((s) => s.value).sort(),
    ['api.example.internal', 'www.example.internal'],
    'SANs computed from the CSR',
  );
  t.equal(cert.owner, 'administrator', 'the owner is the requester');
  t.equal(cert.team, 'web', 'an editable element without a rule takes the submitted value');
});

t.test('a rule that fails on a request refuses it, naming the element and the position', async (t) => {
  t.equal((await createProfile('lookup', { subject: [{ element: 'cn.1', editable: false, computationRule: 'Lookup("nowhere", {{csr.subject.cn}}, "owner")' }] })).statusCode, 201);
  const before = Number(((await kernel.db.knex('requests').count({ n: '*' }).first()) as { n: number | string }).n);
  const res = await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'lookup', template: { csr: csrFor('host.example.com', ['host.example.com']) } });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error, 'TPL-002', 'an evaluation failure');
  t.match(res.json().detail, /subject\[0\] \(cn\.1\) on profile lookup/);
  t.match(res.json().position, { line: 1, column: Number });
  const after = Number(((await kernel.db.knex('requests').count({ n: '*' }).first()) as { n: number | string }).n);
  t.equal(after, before, 'nothing stored');
});

t.test('a rule reads a datasource record at submit: the owner of a host from a CMDB', async (t) => {
  const source = await startHttpSource(t);
  t.equal((await admin('POST', '/api/v1/datasources/', { name: 'cmdb', kind: 'http', keyField: 'hostname', http: { url: `${source.url}/many` } })).statusCode, 201, 'a CMDB datasource');
  t.match((await admin('PATCH', '/api/v1/datasources/', { names: ['cmdb'] })).json(), [{ status: 'ok', records: 50 }], 'fetched');
  t.equal((await createProfile('cmdb-owned', { owner: { editable: false, computationRule: 'OrElse(Lookup("cmdb", {{csr.subject.cn}}, "owner"), "nobody")' } })).statusCode, 201);
  const submit = (cn: string) => admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'cmdb-owned', template: { csr: csrFor(cn, [cn]) } });
  const known = await submit('h7.example.com');
  t.equal(known.statusCode, 201, known.body.slice(0, 300));
  t.equal(known.json().certificate.owner, 'o7', "the host's owner in the CMDB");
  t.equal((await submit('elsewhere.example.com')).json().certificate.owner, 'nobody', 'no record: the rule\'s fallback');
});
