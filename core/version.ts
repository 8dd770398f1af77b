import { readFileSync } from 'node:fs';

/** Certwright's own version, from the root package.json (read once at load). */
export const PRODUCT_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
