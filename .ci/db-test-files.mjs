#!/usr/bin/env node
// Prints, one per line, the test files whose outcome can depend on the database under test: those that reach
// (through test-local imports, dynamic imports or a spawned fixture named by path) code that boots a kernel or
// reads TEST_DATABASE_URL. `.ci/run` runs only these on MariaDB: a file that never touches the database behaves
// the same on both engines, so running it twice would only cost CI time. Over-inclusion is harmless; a miss is
// not, so the match is on names, not on what a call does. `--free` prints the complement instead.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const testDir = join(root, 'test');
// The helpers that define these names are the only files allowed to mention them without being "a use".
const DEFINERS = new Set(['test/helpers/kernel.ts', 'test/helpers/database.ts']);
const DB_USE = /\b(bootKernel|testConfig|freshDatabaseUrl|onMysql)\s*\(|TEST_DATABASE_URL/;
const PATH_LITERAL = /['"`]([^'"`\s]+\.(?:[cm]?[jt]s))['"`]/g;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

// A literal './x.js' in a .ts tree means './x.ts' (ESM-with-tsx convention); fixtures may also be named from
// the repository root ('test/fixtures/…').
function resolveLiteral(from, spec) {
  const bases = spec.startsWith('.') ? [resolve(dirname(from), spec)] : [resolve(root, spec)];
  for (const b of bases) {
    for (const c of [b, b.replace(/\.js$/, '.ts'), b.replace(/\.mjs$/, '.mts')]) {
      if (c.startsWith(testDir) && existsSync(c) && statSync(c).isFile()) return c;
    }
  }
  return null;
}

const source = new Map();
const read = f => {
  if (!source.has(f)) source.set(f, readFileSync(f, 'utf8'));
  return source.get(f);
};
const direct = f => !DEFINERS.has(relative(root, f)) && DB_USE.test(read(f));

// Depth-first over the file's whole closure (no memo across files: a cycle must not cache a false "no").
function touchesDb(file, seen = new Set()) {
  if (seen.has(file)) return false;
  seen.add(file);
  if (direct(file)) return true;
  for (const m of read(file).matchAll(PATH_LITERAL)) {
    const dep = resolveLiteral(file, m[1]);
    if (dep && touchesDb(dep, seen)) return true;
  }
  return false;
}

const wantFree = process.argv.includes('--free');
const files = walk(testDir).filter(f => f.endsWith('.test.ts')).sort();
for (const f of files) if (touchesDb(f) !== wantFree) console.log(relative(root, f));
