import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import t from 'tap';
import { generateDocs } from '../../core/docs/generate.js';
import { PROJECT_ROOT } from '../../core/kernel.js';

t.test('the committed API and plugin reference match what the code generates', async (t) => {
  const generated = await generateDocs();
  for (const [path, text] of Object.entries(generated)) {
    const committed = readFileSync(resolve(PROJECT_ROOT, path), 'utf8');
    t.ok(committed === text, `${path} is current (run: npm run docs)`);
  }
  const api = JSON.parse(generated['docs/openapi.json']!) as { info: { version: string }; components: { schemas: Record<string, unknown> } };
  t.equal(api.info.version, '2.11.0');
  t.ok(api.components.schemas.Problem, 'the problem schema is a named component');
  t.match(generated['docs/plugins.md'], /## Log trigger channel \(`trigger-log`\)/);
});
