/**
 * The README's lists of public routes and of routes open to any authenticated principal are the route
 * declarations of a kernel with the built-in plugins, no more and no less (issue 24 item 8): a route that
 * opens up without being documented, or a documented one that closes, fails here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../../core/kernel.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../helpers/kernel.js';

const README = readFileSync(resolve(PROJECT_ROOT, 'README.md'), 'utf8');

/** Every `METHOD /path` in backticks between <!-- routes:<kind> --> and <!-- /routes:<kind> -->. */
function documented(kind: string): Set<string> {
  const start = README.indexOf(`<!-- routes:${kind} -->`);
  const end = README.indexOf(`<!-- /routes:${kind} -->`);
  if (start < 0 || end < start) throw new Error(`README has no routes:${kind} block`);
  return new Set([...README.slice(start, end).replace(/\n\s*/g, ' ').matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`/g)].map((m) => `${m[1]} ${m[2]}`));
}

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const declared = (kind: 'public' | 'authenticated'): Set<string> =>
  new Set(kernel.app.routeTable.filter((r) => r.access === kind && r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`));

for (const kind of ['public', 'authenticated'] as const) {
  t.test(`README routes:${kind} = the ${kind} route declarations`, async (t) => {
    const inReadme = documented(kind);
    const inCode = declared(kind);
    t.same([...inCode].filter((r) => !inReadme.has(r)).sort(), [], `${kind} routes the README does not list`);
    t.same([...inReadme].filter((r) => !inCode.has(r)).sort(), [], `routes the README lists as ${kind} that are not`);
    t.ok(inCode.size > 3, `${kind}: the kernel declares some (${inCode.size})`);
  });
}
