import { Command } from 'commander';
import { ConfigError, loadConfig, type CertwrightConfig } from './config/index.js';
import { Kernel } from './kernel.js';
import { generateDocs } from './docs/generate.js';
import { validatePluginFolder } from './plugins/validate-folder.js';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PROJECT_ROOT } from './kernel.js';

/** A bad configuration is one line on stderr naming the key and the reason, and exit code 2. */
function configOrExit(): CertwrightConfig {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`certwright: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function serve(): Promise<void> {
  const config = configOrExit();
  let kernel: Kernel;
  try {
    kernel = await Kernel.boot({ config });
  } catch (err) {
    process.stderr.write(`certwright: boot failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    kernel.logger.info({ signal }, 'shutting down');
    kernel.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        kernel.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    const address = await kernel.listen();
    kernel.logger.info({ address }, `Certwright listening on ${address}`);
  } catch (err) {
    process.stderr.write(`certwright: cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message}\n`);
    await kernel.stop();
    process.exit(1);
  }
}

async function migrate(): Promise<void> {
  const config = configOrExit();
  // Booting applies core migrations, then each plugin's; nothing is started and no port is opened.
  const kernel = await Kernel.boot({ config: { ...config, log: { ...config.log, level: 'warn' } }, startPlugins: false });
  await kernel.stop();
  process.stdout.write('migrations applied\n');
}

async function listPlugins(options: { json?: boolean }): Promise<void> {
  const config = configOrExit();
  const kernel = await Kernel.boot({ config: { ...config, log: { ...config.log, level: 'silent' } }, startPlugins: false });
  const rows = kernel.plugins.summaries().map((s) => (s.state === 'registered' ? { ...s, state: 'ready' } : s));
  await kernel.stop();
  if (options.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const table = [['ID', 'KIND', 'VERSION', 'STATE', 'SOURCE', 'REASON'], ...rows.map((r) => [r.id, r.kind ?? '-', r.version ?? '-', r.state, r.source, r.reason ?? ''])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
}

async function validatePlugin(dir: string): Promise<void> {
  const result = await validatePluginFolder(dir);
  if (result.ok) {
    process.stdout.write(`ok: ${result.manifest.id}@${result.manifest.version} (${result.manifest.kind})\n`);
    return;
  }
  for (const error of result.errors) process.stderr.write(`invalid: ${error}\n`);
  process.exitCode = 1;
}

async function docs(options: { check?: boolean }): Promise<void> {
  const generated = await generateDocs();
  const stale: string[] = [];
  for (const [path, text] of Object.entries(generated)) {
    const file = resolve(PROJECT_ROOT, path);
    let current: string | null = null;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // Not generated yet.
    }
    if (current === text) continue;
    stale.push(path);
    if (!options.check) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
  }
  if (options.check && stale.length) {
    process.stderr.write(`generated docs are stale: ${stale.join(', ')} (run npx certwright docs)\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(stale.length ? `wrote ${stale.join(', ')}\n` : 'docs up to date\n');
}

const program = new Command('certwright').description('Certwright certificate lifecycle management').showHelpAfterError();
program.command('serve').description('run the service (the default of npm start)').action(serve);
program.command('migrate').description('apply database migrations (core and plugins) and exit').action(migrate);
const plugins = program.command('plugins').description('inspect plugins');
plugins.command('list').description('list discovered plugins and their state').option('--json', 'machine-readable output').action(listPlugins);
program.command('docs').description('regenerate docs/openapi.json and docs/plugins.md').option('--check', 'exit 1 if they are stale').action(docs);
plugins.command('validate').argument('<dir>', 'plugin folder (with manifest.json)').description("check a plugin folder's manifest and entry").action(validatePlugin);

await program.parseAsync(process.argv);
