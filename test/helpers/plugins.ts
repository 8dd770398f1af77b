import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SDK_URL = pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), '../../sdk/src/index.ts')).href;

/**
 * Writes an out-of-tree plugin folder (manifest.json + index.ts) the way a vendor would ship one. The
 * entry imports the SDK through `__SDK__`, replaced by this checkout's SDK (temp folders have no
 * node_modules to resolve `@certwright/sdk` from).
 */
export function writePlugin(
  parent: string,
  folder: string,
  manifest: Record<string, unknown>,
  source: string,
  extraFiles: Record<string, string> = {},
): string {
  const dir = join(parent, folder);
  mkdirSync(dir, { recursive: true });
  const full = { name: folder, version: '1.0.0', sdk: '^1.0.0', entry: 'index.ts', ...manifest };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(full, null, 2));
  writeFileSync(join(dir, 'index.ts'), source.replaceAll('__SDK__', SDK_URL));
  for (const [name, text] of Object.entries(extraFiles)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text.replaceAll('__SDK__', SDK_URL));
  }
  return dir;
}

/** A protocol plugin with GET /fixture/<capability> answering {capability}. */
export function writeProtocolPlugin(parent: string, capability: string, extraRoutes = ''): string {
  return writePlugin(
    parent,
    `protocol-fixture-${capability}`,
    { id: `protocol-fixture-${capability}`, kind: 'protocol', capability },
    `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.protocols.register({
      registerRoutes(scope) {
        scope.route({ method: 'GET', url: '/fixture/${capability}', handler: async () => ({ capability: '${capability}' }) });
        ${extraRoutes}
      },
    });
  },
});
`,
  );
}
