import { Command } from 'commander';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, loadConfig, type CertwrightConfig } from './config/index.js';
import type { Kernel } from './kernel.js';
import type { RangeBound } from './events/bundle/range.js';
import type { AutomationPolicy } from './automation/policies/model.js';
import type { SimulateFlags, SimulateOptions } from './simulator/cli.js';
import { DEFAULT_RENEW_BEFORE, DEFAULT_YEARS } from './simulator/defaults.js';

// A command loads only what it uses (dynamic imports below): the kernel's module graph costs seconds to load,
// and commands such as `events verify`, `plugins validate` or a usage error need none of it.

/** The kernel class, loaded on first use. */
async function kernelClass(): Promise<typeof Kernel> {
  return (await import('./kernel.js')).Kernel;
}

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
  const Kernel = await kernelClass();
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
    kernel.logger.info({ address, ...(kernel.httpsAddress ? { https: kernel.httpsAddress } : {}) }, `Certwright listening on ${address}${kernel.httpsAddress ? ` and ${kernel.httpsAddress}` : ''}`);
  } catch (err) {
    process.stderr.write(`certwright: cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message}\n`);
    await kernel.stop();
    process.exit(1);
  }
}

async function migrate(): Promise<void> {
  const config = configOrExit();
  // Booting applies core migrations, then each plugin's; nothing is started and no port is opened.
  const kernel = await (await kernelClass()).boot({ config: { ...config, log: { ...config.log, level: 'warn' } }, startPlugins: false });
  await kernel.stop();
  process.stdout.write('migrations applied\n');
}

async function listPlugins(options: { json?: boolean }): Promise<void> {
  const config = configOrExit();
  const kernel = await (await kernelClass()).boot({ config: { ...config, log: { ...config.log, level: 'silent' } }, startPlugins: false });
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
  const { validatePluginFolder } = await import('./plugins/validate-folder.js');
  const result = await validatePluginFolder(dir);
  if (result.ok) {
    process.stdout.write(`ok: ${result.manifest.id}@${result.manifest.version} (${result.manifest.kind})\n`);
    return;
  }
  for (const error of result.errors) process.stderr.write(`invalid: ${error}\n`);
  process.exitCode = 1;
}

async function docs(options: { check?: boolean }): Promise<void> {
  const [{ generateDocs }, { PROJECT_ROOT }] = await Promise.all([import('./docs/generate.js'), import('./kernel.js')]);
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

/** `events export`: a proof bundle of a range of the event chain (core/events/bundle), read with the normal config. */
async function eventsExport(options: { from?: string; to?: string; out?: string }): Promise<void> {
  const config = configOrExit();
  const { BundleRangeError, parseBound, resolveRange } = await import('./events/bundle/range.js');
  let from: RangeBound | undefined;
  let to: RangeBound | undefined;
  try {
    from = options.from === undefined ? undefined : parseBound(options.from, '--from');
    to = options.to === undefined ? undefined : parseBound(options.to, '--to');
  } catch (err) {
    process.stderr.write(`certwright: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const [Kernel, { bundleOutput }, { BrokenRangeError, exportBundle }, { abandonedAfterMs }, { createIntegrityServices }] = await Promise.all([
    kernelClass(),
    import('./events/bundle/cli.js'),
    import('./events/bundle/export.js'),
    import('./events/integrity/index.js'),
    import('./events/integrity/services.js'),
  ]);
  const kernel = await Kernel.boot({ config: { ...config, log: { ...config.log, level: 'silent' } }, startPlugins: false });
  try {
    const { knex } = kernel.db;
    const integrity = createIntegrityServices({ knex, events: kernel.events, secrets: kernel.secrets, clock: Date.now, abandonedAfterMs: abandonedAfterMs(config.scheduler.lockLifetimeMs) });
    const range = await resolveRange(knex, (await kernel.events.head()).seq, from, to);
    const output = bundleOutput(options.out);
    try {
      const summary = await exportBundle(integrity, range, output.stream);
      await output.commit();
      const line = `exported ${summary.events} events, seq ${summary.from}..${summary.to}, ${summary.checkpoints} checkpoints, key ${summary.keys.join(', ')}`;
      if (options.out === undefined) process.stderr.write(`${line}\n`);
      else process.stdout.write(`${line} to ${options.out}\n`);
    } catch (err) {
      await output.abort();
      throw err;
    }
  } catch (err) {
    if (!(err instanceof BundleRangeError || err instanceof BrokenRangeError)) throw err;
    process.stderr.write(`certwright: ${err.message}\n`);
    process.exitCode = err instanceof BundleRangeError ? 2 : 1;
  } finally {
    await kernel.stop();
  }
}

/** `events verify`: checks a proof bundle with no database. */
async function eventsVerify(bundle: string, options: { key?: string }): Promise<void> {
  const { verifyBundleFile } = await import('./events/bundle/cli.js');
  const { exitCode, output } = verifyBundleFile(bundle, options.key);
  // The verdict (OK or BROKEN) is the answer: stdout; an unreadable bundle or key is an error: stderr.
  (exitCode === 2 ? process.stderr : process.stdout).write(`${output}\n`);
  process.exitCode = exitCode;
}

/**
 * `config export|import`: plugins loaded (their configuration types are exported too) but not started,
 * no scheduler, no port; the registry's functions are called directly as principal `cli`.
 */
async function withConfigKernel(run: (kernel: Kernel) => Promise<void>): Promise<void> {
  const config = configOrExit();
  const [Kernel, { CliUsageError }, { ProblemError }] = await Promise.all([kernelClass(), import('./config-objects/transfer/cli.js'), import('./errors/index.js')]);
  const kernel = await Kernel.boot({ config: { ...config, log: { ...config.log, level: 'silent' } }, startPlugins: false });
  try {
    await run(kernel);
  } catch (err) {
    if (!(err instanceof CliUsageError || err instanceof ProblemError)) throw err;
    process.stderr.write(`certwright: ${err.message}\n`);
    process.exitCode = 2;
  } finally {
    await kernel.stop();
  }
}

/** Flags checked before booting: a usage error costs no database connection. */
async function passphraseOrExit(name: string | undefined): Promise<string | undefined | null> {
  const { passphraseFromEnv } = await import('./config-objects/transfer/cli.js');
  try {
    return passphraseFromEnv(name);
  } catch (err) {
    process.stderr.write(`certwright: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return null;
  }
}

async function configExport(options: { types?: string; passphraseEnv?: string }): Promise<void> {
  const passphrase = await passphraseOrExit(options.passphraseEnv);
  if (passphrase === null) return;
  const { cliExport } = await import('./config-objects/transfer/cli.js');
  await withConfigKernel(async (kernel) => {
    const document = await cliExport(kernel.configObjects, { ...(options.types !== undefined ? { types: options.types } : {}), ...(passphrase !== undefined ? { passphrase } : {}) });
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  });
}

async function configImport(file: string, options: { dryRun?: boolean; passphraseEnv?: string }): Promise<void> {
  const passphrase = await passphraseOrExit(options.passphraseEnv);
  if (passphrase === null) return;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`certwright: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const [{ cliImport }, { conflictCount }] = await Promise.all([import('./config-objects/transfer/cli.js'), import('./config-objects/transfer/import.js')]);
  await withConfigKernel(async (kernel) => {
    const result = await cliImport(kernel.configObjects, text, { dryRun: options.dryRun === true, ...(passphrase !== undefined ? { passphrase } : {}) });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    // A conflict refuses the whole import (nothing written); on a dry run it says the import would be refused.
    if (conflictCount(result) > 0) process.exitCode = 1;
  });
}

/** `simulate renewals`: the flags are checked before booting; the inventory is read with the normal config. */
async function simulateRenewals(flags: SimulateFlags): Promise<void> {
  const { parseSimulateFlags, simulateInventory, SimulatorUsageError, writeReport } = await import('./simulator/cli.js');
  const usage = (err: unknown): void => {
    if (!(err instanceof SimulatorUsageError)) throw err;
    process.stderr.write(`certwright: ${err.message}\n`);
    process.exitCode = 2;
  };
  let options: SimulateOptions;
  try {
    options = parseSimulateFlags(flags, Date.now());
  } catch (err) {
    return usage(err);
  }
  const [{ AUTOMATION_POLICY_TYPE }, { idsCoveredByPolicies }, { DEFAULT_TENANT }] = await Promise.all([
    import('./automation/policies/config-type.js'),
    import('./automation/policies/coverage.js'),
    import('./http/server.js'),
  ]);
  await withConfigKernel(async (kernel) => {
    // What automation policies cover is renewed by the lifecycle task: automated, not by hand.
    const policies = (await kernel.configObjects.list(AUTOMATION_POLICY_TYPE, DEFAULT_TENANT)) as unknown as AutomationPolicy[];
    const covered = await idsCoveredByPolicies(kernel.db.knex, DEFAULT_TENANT, policies, Date.now());
    const result = await simulateInventory(kernel.db.knex, DEFAULT_TENANT, options, process.stderr, covered);
    try {
      writeReport(result, options);
    } catch (err) {
      usage(err);
    }
  });
}

const SIMULATE_HELP = `
The model: every certificate of the inventory that is not revoked, not renewed already (no
renewed_certificate_id metadata) and still valid on 1 January of the first year is replayed (--query narrows
them, in HCQL as the search takes it). Each is renewed when --renew-before of its validity is left; the new
certificate is valid as long as the one it replaces, or the schedule's maximum at the renewal date when
shorter, and is renewed the same way until the end of the period. A renewal later than the DCV reuse period
after the last domain validation validates the domain again. Certificates valid less than a day are left out.
Dates are UTC.

Schedule cabf (CA/B Forum ballot SC-081, by issuance date): maximum validity 398 days, 200 from 2026-03-15,
100 from 2027-03-15, 47 from 2029-03-15; DCV reuse 398, 200, 100, then 10 days at the same dates.

Automation: module acme = ARI-capable; est, scep, mdm, intune, jamf, wcce = protocol-driven; otherwise
autoRenew = renewed by the server; anything else (webra, discovered, none) = no automation, renewed by hand.

Example: certwright simulate renewals --schedule cabf --from 2026 --years 5 --format csv --output renewals.csv
`;

const program = new Command('certwright').description('Certwright certificate lifecycle management').showHelpAfterError();
program.command('serve').description('run the service (the default of npm start)').action(serve);
program.command('migrate').description('apply database migrations (core and plugins) and exit').action(migrate);
const plugins = program.command('plugins').description('inspect plugins');
plugins.command('list').description('list discovered plugins and their state').option('--json', 'machine-readable output').action(listPlugins);
program.command('docs').description('regenerate docs/openapi.json, docs/plugins.md and docs/events.md').option('--check', 'exit 1 if they are stale').action(docs);
plugins.command('validate').argument('<dir>', 'plugin folder (with manifest.json)').description("check a plugin folder's manifest and entry").action(validatePlugin);
const events = program.command('events').description('the event chain: proof bundles');
events
  .command('export')
  .description('write a proof bundle of a range of the event chain (events, checkpoints, public keys)')
  .option('--from <seq|date>', 'first event: a seq or an ISO 8601 date (default: the first event)')
  .option('--to <seq|date>', 'last event: a seq or an ISO 8601 date (default: the chain head)')
  .option('--out <file>', 'write the bundle to this file (default: stdout)')
  .action(eventsExport);
events
  .command('verify')
  .argument('<bundle>', 'proof bundle file (from events export)')
  .option('--key <file>', 'the trusted public key (PEM); without it the bundled key is trusted')
  .description('check a proof bundle with no database: hashes, links, checkpoint signatures')
  .action(eventsVerify);

const configuration = program.command('config').description('configuration objects: export and import');
configuration
  .command('export')
  .description('print an export document of the configuration objects (secrets left out, or sealed under a passphrase)')
  .option('--types <list>', 'only these types, comma-separated (type or export key: credential,proxies…)')
  .option('--passphrase-env <VAR>', 'seal secrets under the passphrase held by this environment variable')
  .action(configExport);
configuration
  .command('import')
  .argument('<file>', 'export document (JSON)')
  .option('--dry-run', 'report what the import would do, write nothing')
  .option('--passphrase-env <VAR>', 'open sealed secrets with the passphrase held by this environment variable')
  .description('import an export document in one transaction (all or nothing); prints the report, exit 1 on conflicts')
  .action(configImport);

const simulate = program.command('simulate').description('replay a schedule over the inventory');
simulate
  .command('renewals')
  .description('replay a validity / DCV-reuse schedule over the inventory: renewals per month, peak rate, certificates no automation covers')
  .option('--schedule <name>', 'the schedule: cabf', 'cabf')
  .option('--from <year>', 'first year (default: the current year)')
  .option('--years <n>', `how many years (default: ${DEFAULT_YEARS})`)
  .option('--renew-before <share>', `share of the validity left at renewal: 0.33, 1/3 or ari (default: ${DEFAULT_RENEW_BEFORE})`)
  .option('--query <HCQL>', 'only the certificates this certificate query admits')
  .option('--format <format>', 'table, csv (one row per year) or json (everything)', 'table')
  .option('--output <file>', 'write the report to this file (default: stdout)')
  .addHelpText('after', SIMULATE_HELP)
  .action(simulateRenewals);

await program.parseAsync(process.argv);
