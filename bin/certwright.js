#!/usr/bin/env node
// Certwright runs its TypeScript sources directly through tsx's loader (no build step), exactly as
// `node --import tsx` does for the tests, so built-in and out-of-tree plugins load by the same path.
import 'tsx';

await import('../core/cli.ts');
