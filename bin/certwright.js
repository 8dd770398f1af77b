#!/usr/bin/env node
// Certwright runs its TypeScript sources directly through tsx's loader (no build step), the same way
// tests do, so built-in plugins and out-of-tree ones load by the same path.
import { register } from 'tsx/esm/api';

register();
await import('../core/cli.ts');
