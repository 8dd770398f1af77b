// Entry point of a pool thread (core/workers/pool.ts). Plain JavaScript: a worker thread does not inherit
// the main thread's TypeScript loader, neither `node --import tsx` (tests, bench) on Node 20 nor the
// `import 'tsx'` of bin/certwright.js (production), so it registers tsx's loader for itself, then loads
// the TypeScript handler. Piscina awaits this module's default export.
import { register } from 'tsx/esm/api';

register();
const { default: runTask } = await import('./handler.ts');

export default runTask;
