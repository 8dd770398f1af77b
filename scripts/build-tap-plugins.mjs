// Runs `tap build` after `npm install` / `npm ci`, so tap's Test class is built with the plugin set package.json
// asks for ("tap".plugin: without @tapjs/typescript and @tapjs/mock) before the first `npm test`. tap does rebuild
// by itself when the set differs, but the runner that notices has already chosen its loaders from the stock
// build: the first `npm test` of a fresh clone (every CI run) started each test file with @tapjs/typescript's
// ts-node loader and @tapjs/mock's as well as tsx — measured here on a busy machine, test/core/http/access.test.ts
// took 100 s that way against 17 s. Nothing to do when tap is not installed (an install without dev dependencies).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const tap = join(process.cwd(), 'node_modules', '.bin', 'tap');
if (existsSync(tap)) {
  const built = spawnSync(tap, ['build'], { stdio: 'inherit' });
  // A failure to start tap at all (no status) says why instead of failing the install silently.
  if (built.error) console.error(`tap build could not run: ${built.error.message}`);
  process.exitCode = built.status ?? 1;
}
