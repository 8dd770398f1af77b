// `npm run bench -- <name>`: runs the benchmark bench/<name>.ts, a module exporting `run(): Promise<void>`.
// Without a name, or with an unknown one, lists the available benchmarks and exits 1.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Benchmark {
  run(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));

/** Every bench/<name>.ts except this dispatcher (fixtures/ and declaration files are not benchmarks). */
function available(): string[] {
  return readdirSync(here, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && e.name !== 'index.ts')
    .map((e) => e.name.slice(0, -'.ts'.length))
    .sort();
}

function usage(message: string): never {
  const names = available();
  process.stderr.write(
    `${message}\nusage: npm run bench -- <name>\navailable benchmarks: ${names.length ? names.join(', ') : '(none)'}\n`,
  );
  process.exit(1);
}

const name = process.argv[2];
if (!name || name === '--help' || name === '-h') usage('no benchmark named');
if (!available().includes(name)) usage(`unknown benchmark: ${name}`);

const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as Partial<Benchmark>;
if (typeof mod.run !== 'function') usage(`bench/${name}.ts does not export run(): Promise<void>`);

try {
  await mod.run();
} catch (err) {
  process.stderr.write(`bench ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
