import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { DISCOVERY_EVENT_CODES } from '../../../core/discovery/types.js';
import { EVENT_CATALOGUE, EVENT_CODES } from '../../../core/events/catalogue.js';
import { LIFECYCLE_EVENT_CODES } from '../../../core/events/codes.js';
import { eventCodeReference } from '../../../core/docs/event-codes.js';
import { PROJECT_ROOT } from '../../../core/kernel.js';

const CORE = join(PROJECT_ROOT, 'core');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Literals in the shape of an event code (`CERTIFICATE-IMPORTED`, `SEC-LOGIN-FAILURE`): upper-case words
 * joined by dashes. Error codes end in three digits (`CRT-003`) and are not events.
 */
const CODE_LITERAL = /['"`]([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)['"`]/g;
const ERROR_CODE = /-\d{3}$/;

/** Literals of that shape that are not event codes. Add here, with the reason, when one is not an event. */
const NOT_EVENTS = new Set([
  'ML-DSA-44', // post-quantum algorithm names (core/pki)
  'ML-DSA-65',
  'ML-DSA-87',
  'READ-COMMITTED', // a transaction isolation level
  'HTTP-PROXY', // the HTTP proxies' problem code family (core/config-objects/types/http-proxy.ts)
  'SEC-PWD', // problem code families of security collections on the configuration registry (errorFamily)
  'SEC-ROLE',
  'SEC-TEAM',
  'SEC-IDP',
  'SEC-SVA', // service accounts
  'DCV-PROVIDER', // the DCV collections' problem code families (core/dcv/config-types.ts)
  'AUTOMATION-POLICY', // the automation policies' problem code family (core/automation/policies/config-type.ts)
  'DCV-PROVISIONER',
  'DCV-POLICY',
  'EXECUTION-POLICY', // execution policies' problem code family (core/automation/executions/config-type.ts)
  'SHA-1', // a digest name (core/security/x509)
  'PKI-CONN', // problem code families of collections that keep their own routes (errorFamily)
  'PKI-QUEUE',
]);

/**
 * Codes built from a template, by the template as written in the source → every code it can produce. A
 * new template fails the test until it is listed here (and its codes catalogued).
 */
const TEMPLATES: Record<string, readonly string[]> = {
  // core/pki/cas/service.ts, CaChange kinds.
  'CA-${change.kind.toUpperCase()}': ['CA-CREATE', 'CA-UPDATE', 'CA-DELETE'],
  // core/security/groups/member-routes.ts, for roles and teams.
  'SEC-${upper}-MEMBERS-ADDED': ['SEC-ROLE-MEMBERS-ADDED', 'SEC-TEAM-MEMBERS-ADDED'],
  'SEC-${upper}-MEMBERS-REMOVED': ['SEC-ROLE-MEMBERS-REMOVED', 'SEC-TEAM-MEMBERS-REMOVED'],
};
/** A template literal that starts like a code: `CA-${…}`, `SEC-${…}-MEMBERS-ADDED`. */
const TEMPLATE_LITERAL = /`([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\$\{[^`]*)`/g;
/** The catalogue itself builds codes from templates; it is what the sources are checked against. */
const scanned = (): string[] => sources(CORE).filter((f) => relative(CORE, f) !== join('events', 'catalogue.ts'));

t.test('every event code raised in core/ is in the catalogue', async (t) => {
  const known = new Set<string>([...EVENT_CODES.keys(), ...DISCOVERY_EVENT_CODES, ...NOT_EVENTS]);
  const missing: string[] = [];
  const templates = new Set<string>();
  let files = 0;
  for (const file of scanned()) {
    const text = readFileSync(file, 'utf8');
    files++;
    for (const match of text.matchAll(CODE_LITERAL)) {
      const code = match[1]!;
      if (!ERROR_CODE.test(code) && !known.has(code)) missing.push(`${code} (${relative(PROJECT_ROOT, file)})`);
    }
    for (const match of text.matchAll(TEMPLATE_LITERAL)) templates.add(match[1]!);
  }
  t.ok(files > 100, `scanned ${files} source files`);
  t.same(missing, [], 'codes raised but missing from core/events/catalogue.ts (or, if not events, from NOT_EVENTS here)');
  t.same([...templates].filter((template) => !(template in TEMPLATES)), [], 'templated codes must be expanded in TEMPLATES here');
  for (const [template, codes] of Object.entries(TEMPLATES)) {
    t.ok(templates.has(template), `the template \`${template}\` is still in the sources`);
    for (const code of codes) t.ok(EVENT_CODES.has(code), `${code} (from \`${template}\`) is catalogued`);
  }
});

t.test('the scanner finds what it is meant to find', async (t) => {
  const sample = "events.append({ code: 'SEC-LOGIN-FAILURE' }); throw new ProblemError('CRT-003'); record(request, \"LABEL-CREATED\", x); code: `CA-${kind}`";
  t.same([...sample.matchAll(CODE_LITERAL)].map((m) => m[1]).filter((c) => !ERROR_CODE.test(c!)), ['SEC-LOGIN-FAILURE', 'LABEL-CREATED']);
  t.same([...sample.matchAll(TEMPLATE_LITERAL)].map((m) => m[1]), ['CA-${kind}']);
});

t.test('catalogue entries are complete and unique, and include the lifecycle codes', async (t) => {
  const codes = EVENT_CATALOGUE.map((e) => e.code);
  t.equal(new Set(codes).size, codes.length, 'one entry per code');
  for (const code of Object.values(LIFECYCLE_EVENT_CODES)) t.ok(EVENT_CODES.has(code), `lifecycle code ${code} is catalogued`);
  for (const entry of EVENT_CATALOGUE) {
    t.match(entry.code, /^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$/, `${entry.code}: upper-case words joined by dashes`);
    t.ok(entry.module.length > 0 && entry.description.length > 0 && entry.statuses.length > 0, `${entry.code}: module, description and statuses`);
  }
  // An entry that is not reserved must still be raised somewhere: a removed event does not linger in the docs.
  const text = scanned()
    .filter((f) => relative(CORE, f) !== join('events', 'codes.ts'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  for (const entry of EVENT_CATALOGUE.filter((e) => !e.reserved)) {
    const templated = Object.entries(TEMPLATES).some(([, expansions]) => expansions.includes(entry.code));
    const lifecycle = Object.entries(LIFECYCLE_EVENT_CODES).find(([, code]) => code === entry.code);
    const raised = text.includes(`'${entry.code}'`) || templated || (lifecycle !== undefined && text.includes(`LIFECYCLE_EVENT_CODES.${lifecycle[0]}`));
    t.ok(raised, `${entry.code} is raised by core/ (or marked reserved)`);
  }
});

t.test('docs/events.md is generated from the catalogue', async (t) => {
  const doc = eventCodeReference();
  t.match(doc, /^# Event codes\n/);
  for (const entry of EVENT_CATALOGUE) t.ok(doc.includes(`\`${entry.code}\``), `${entry.code} is documented`);
  t.match(doc, /\| `thumbprint` \| SHA-1 thumbprint \(hex\) \|/, 'payload members are listed');
  for (const code of DISCOVERY_EVENT_CODES) t.ok(doc.includes(`\`${code}\``), `discovery code ${code} is listed`);
});
