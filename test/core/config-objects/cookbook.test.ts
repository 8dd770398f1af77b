/**
 * GET /api/v1/adoc: the configuration cookbook. The document is rendered by the real AsciiDoc processor
 * (asciidoctor, secure mode) with a memory logger: it must render without a single warning, hold one
 * section per readable type and one anchored table per object, link references, keep hostile user text
 * as text, and never hold a secret.
 */
import t from 'tap';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { loadFixtures } from './fixtures/index.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SECRET = 'Known-Secret-Value-Of-The-Cookbook-9c1e';
/** AsciiDoc that would be markup if it reached the document as is: a table, an include, attributes, passthroughs. */
const HOSTILE_LINES = [
  '|===',
  'include::/etc/passwd[]',
  '{attr} and <<x>> and pass:[<b>bold</b>]',
  '= Not a title',
  '* not a list',
  '.Not a block title',
  '[source,ruby]',
  '// not a comment',
  '',
  '++++',
  'ifdef::x[]',
  ':toc!: left',
  'NOTE: not an admonition',
  '*strong* _em_ `mono` #mark# ^sup^ ~sub~ ++plus++ +++<i>raw</i>+++ a -- b ... (C) -> https://evil.example/x mail@evil.example',
  '|cell | other',
  '[[forged-anchor]]<<credential-svc,forged link>> footnote:[x] kbd:[Ctrl] link:http://evil.example[click]',
];
const HOSTILE = HOSTILE_LINES.join('\n');
const HOSTILE_DESCRIPTION = 'Corp | proxy *not strong* {attr} <<x>> `mono` # ++x++ \\ & &amp; &#65;';

// asciidoctor 4 re-exports @asciidoctor/core but its package.json `exports` carries no types: the API is
// typed from the package it re-exports (a variable specifier, so TypeScript does not look for its own).
const asciidoctorPackage: string = 'asciidoctor';
const { convert, LoggerManager, MemoryLogger } = (await import(asciidoctorPackage)) as typeof import('@asciidoctor/core');

const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const admin = caller(kernel, ADMIN_HEADERS);

async function must(res: Promise<{ statusCode: number; body: string }>, status: number): Promise<void> {
  const r = await res;
  if (r.statusCode !== status) throw new Error(`${r.statusCode}: ${r.body}`);
}

await must(admin('POST', '/api/v1/security/credentials/', { name: 'svc', type: 'password', login: 'svc-login', password: { value: SECRET }, targets: ['proxy'], description: 'Proxy account' }), 201);
await must(admin('POST', '/api/v1/proxy/httpproxies/', { name: 'corp', host: 'proxy.example', port: 3128, credentials: 'svc', destinations: ['*.example.com', 'api.example.org'], description: HOSTILE_DESCRIPTION }), 201);
await must(admin('POST', '/api/v1/system/terms-of-services/', { name: 'tos', description: 'Terms', contents: [{ lang: 'en', value: HOSTILE }, { lang: 'fr', value: 'Conditions générales' }] }), 201);
await must(admin('POST', '/api/v1/system/storages/', { name: 'reports', type: 'filesystem', path: 'reports' }), 201);
await must(admin('PUT', '/api/v1/system/configuration/', { type: 'interface_customization', headerStart: '#112233', announcements: [{ level: 'info', content: [{ lang: 'en', value: 'Maintenance | {attr}' }] }] }), 200);

/** Text content of HTML: tags dropped, character references decoded. */
function textOf(html: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#8203': '' };
  // One pass: a decoded `&` must not start another reference.
  return html.replace(/<[^>]*>/g, '').replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, ref: string) => {
    if (ref.startsWith('#x') || ref.startsWith('#X')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1)));
    return named[ref] ?? m;
  });
}

/** Renders with Asciidoctor (secure mode, missing attributes reported) and answers the HTML and every log message. */
async function render(adoc: string): Promise<{ html: string; messages: string[] }> {
  const logger = MemoryLogger.create();
  LoggerManager.setLogger(logger);
  const html = (await convert(adoc, { safe: 'secure', standalone: true, attributes: { 'attribute-missing': 'warn' } })) as string;
  return { html, messages: logger.getMessages().map((m) => `${m.getSeverity()}: ${m.getText()}`) };
}

const headings = (html: string, level: number): string[] => [...html.matchAll(new RegExp(`<h${level}[^>]*>([\\s\\S]*?)</h${level}>`, 'g'))].map((m) => textOf(m[1]!).trim());

t.test('with an object of every type (the export fixtures), still no warning, a link for each reference', async (t) => {
  const full = await bootKernel(t);
  const call = caller(full, ADMIN_HEADERS);
  const fixtures = await loadFixtures();
  for (const type of full.configObjects.types()) {
    for (const row of fixtures.get(type.decl.type)?.rows ?? []) await must(call(row.method, row.base, row.body), row.method === 'POST' ? 201 : 200);
  }
  const res = await call('GET', '/api/v1/adoc');
  t.equal(res.statusCode, 200);
  const { html, messages } = await render(res.body);
  t.same(messages, [], 'no warning or error from the processor');
  for (const id of ['ca-export-root', 'label-env', 'pki-queue-slow', 'pki-connector-internal', 'profile-web', 'trigger-deploy', 'scheduled-task-expiring', 'identity-provider-basic']) {
    t.match(html, new RegExp(`<h3 id="${id}"`), `anchor ${id}`);
  }
  t.match(html, /<a href="#pki-connector-internal">internal<\/a>/, 'the profile links to its connector');
  t.match(html, /<a href="#credential-raw">raw<\/a>/, 'the trigger links to its credential');
  for (const secret of [...fixtures.values()].flatMap((f) => f.clear ?? [])) t.notOk(res.body.includes(secret.replace(/-----[A-Z ]+-----/g, '').trim().slice(0, 64)), 'no secret in the document');
});

t.test('the administrator gets every type, rendered without a warning', async (t) => {
  const res = await admin('GET', '/api/v1/adoc');
  t.equal(res.statusCode, 200, 'answered');
  t.match(res.headers['content-type'], /^text\/plain; charset=utf-8/, 'text/plain');
  const adoc = res.body;
  t.ok(adoc.startsWith('= Certwright configuration cookbook\n'), 'document title first');
  t.match(adoc, /^:toc: /m, 'a table of contents');
  t.match(adoc, /^Generated at \d{4}-\d\d-\d\d/m, 'the generated-at line');

  const { html, messages } = await render(adoc);
  t.same(messages, [], 'no warning or error from the processor');

  const types = kernel.configObjects.types();
  t.same(headings(html, 2), types.map((type) => type.decl.title), 'one h2 per registered type, in registry order');
  for (const id of ['credential-svc', 'http-proxy-corp', 'terms-of-service-tos', 'storage-reports', 'storage-default', 'system-configuration-storage', 'system-configuration-interface_customization']) {
    t.match(html, new RegExp(`<h3 id="${id}"`), `anchor ${id}`);
  }
  t.match(adoc, /^\[\[http-proxy-corp\]\]\n=== corp$/m, 'the anchor names the subsection');
  t.match(html, /<p class="tableblock"><a href="#credential-svc">svc<\/a><\/p>/, 'the proxy links to its credential');
  t.match(html, /<p class="tableblock"><a href="#storage-default">default<\/a><\/p>/, 'the storage entry links to its storage');
  t.equal((html.match(/<table class="tableblock/g) ?? []).length, (html.match(/<h3 /g) ?? []).length, 'one table per object: no user text opened another');

  // Secrets: never the value, always the mask.
  t.notOk(adoc.includes(SECRET), 'the secret is not in the document');
  t.notOk(html.includes(SECRET), 'nor in the rendered HTML');
  t.notOk(capture.text.includes(SECRET), 'nor in the log');
  t.match(adoc, /^\|password\.value\n\|\+\*{8}\+$/m, 'the secret field is shown masked');
  t.ok(textOf(html).includes('********'), 'the mask is rendered');

  // Hostile text: every line appears as text, nothing became markup.
  const text = textOf(html);
  for (const line of HOSTILE_LINES.filter(Boolean)) t.ok(text.includes(line), `kept as text: ${line}`);
  t.ok(text.includes(HOSTILE_DESCRIPTION), 'the description is kept as text');
  t.ok(text.includes('fr: Conditions générales'), 'one line per language');
  const content = html.slice(html.indexOf('<div id="content">'));
  t.notMatch(content, /class="bare include"|<b>|<i>|<strong>|<em>|<mark>|<sup>|<sub>|id="forged-anchor"|href="#x"|href="http|mailto:/, 'no markup from user text');
  t.notMatch(content, /&#8212;|&#8230;|&#169;|&#8594;/, 'no typographic replacements of user text');
  t.match(html, /<code>[^<]*Maintenance/, 'structured values as a monospace JSON literal');
  t.notMatch(html, />forged link<\/a>/, 'the forged link in user text is no link');
});

t.test('a proxies reader gets the HTTP proxies only; the credential is named, not linked', async (t) => {
  const reader = await createPrincipal(kernel, 'proxy-reader', { permissions: [{ value: 'configuration:proxies:read' }] });
  const res = await caller(kernel, reader.headers)('GET', '/api/v1/adoc');
  t.equal(res.statusCode, 200, 'answered');
  const { html, messages } = await render(res.body);
  t.same(messages, [], 'no warning or error from the processor');
  t.same(headings(html, 2), ['HTTP proxies']);
  t.match(html, /<h3 id="http-proxy-corp"/);
  t.notMatch(html, /href="#credential-svc"/, 'no link to a section the document does not hold');
  t.match(res.body, /^\|credentials\n\|svc$/m, 'the credential as plain text');
  t.notOk(res.body.includes('Terms of service'));
});

t.test('refusals', async (t) => {
  const nobody = await createPrincipal(kernel, 'nobody');
  const denied = await caller(kernel, nobody.headers)('GET', '/api/v1/adoc');
  t.equal(denied.statusCode, 403, 'no configuration permission → 403');
  t.equal((denied.json() as Json).error, 'SEC-PERM-001');
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/adoc', headers: { host: 'localhost' } })).statusCode, 401, 'no auth → 401');
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/adoc', headers: { host: 'evil.example', ...ADMIN_HEADERS } })).statusCode, 404, 'wrong host → 404');
});

t.test('a generation failure answers ADOC-001 and logs the cause, without leaking it', async (t) => {
  const registry = kernel.configObjects;
  const list = registry.list.bind(registry);
  registry.list = async () => {
    throw new Error('store exploded: cause-text-only-in-the-log');
  };
  t.teardown(() => {
    registry.list = list;
  });
  const res = await admin('GET', '/api/v1/adoc');
  t.equal(res.statusCode, 500);
  t.equal((res.json() as Json).error, 'ADOC-001');
  t.notOk(res.body.includes('cause-text-only-in-the-log'), 'the cause is not answered');
  t.ok(capture.text.includes('cause-text-only-in-the-log'), 'it is logged');
});
