import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { PluginManifest } from '@certwright/sdk';
import { loadConfig } from '../config/index.js';
import { Kernel, PROJECT_ROOT } from '../kernel.js';
import { discoverPlugins } from '../plugins/discover.js';
import { readManifest } from '../plugins/manifest.js';
import { secretFields } from '../plugins/instances.js';
import { eventCodeReference } from './event-codes.js';

/** The generated reference files, by path relative to the project root. */
export type GeneratedDocs = Record<string, string>;

/** One section per built-in plugin, from its manifest: the manifest is the single source of its docs. */
export function pluginReference(manifests: PluginManifest[]): string {
  const out = ['# Built-in plugins', '', 'Generated from each plugin\'s manifest.json by `npx certwright docs`. Do not edit.', ''];
  for (const m of [...manifests].sort((a, b) => a.id.localeCompare(b.id))) {
    out.push(`## ${m.name} (\`${m.id}\`)`, '');
    out.push(`- kind: ${m.kind}`, `- version: ${m.version}`, `- SDK: ${m.sdk}`);
    if (m.capability) out.push(`- capability: ${m.capability}`);
    if (m.license) out.push(`- licence module: ${m.license}`);
    if (m.multiInstance) out.push('- several instances may be configured');
    if (m.egress?.length) out.push(`- may reach: ${m.egress.join(', ')}`);
    if (m.jobs?.length) out.push(`- jobs: ${m.jobs.join(', ')}`);
    out.push('');
    if (m.description) out.push(m.description, '');
    if (m.docs?.summary) out.push(m.docs.summary, '');
    const props = (m.configSchema?.properties ?? {}) as Record<string, { type?: string; description?: string; default?: unknown; enum?: unknown[] }>;
    if (Object.keys(props).length) {
      const required = new Set((m.configSchema?.required as string[] | undefined) ?? []);
      const secrets = new Set(secretFields(m.configSchema));
      out.push('| setting | type | required | default | notes |', '|---|---|---|---|---|');
      for (const [name, p] of Object.entries(props)) {
        const notes = [p.description, p.enum ? `one of ${p.enum.join(', ')}` : undefined, secrets.has(name) ? 'secret (encrypted at rest, never shown)' : undefined].filter(Boolean).join('; ');
        out.push(`| ${name} | ${p.type ?? ''} | ${required.has(name) ? 'yes' : 'no'} | ${p.default === undefined ? '' : JSON.stringify(p.default)} | ${notes} |`);
      }
      out.push('');
    }
    for (const link of m.docs?.links ?? []) out.push(`- [${link.title}](${link.url})`);
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** Boots a throw-away kernel (temp SQLite, no port) to read the OpenAPI document its routes produce. */
export async function generateDocs(): Promise<GeneratedDocs> {
  const dataDir = mkdtempSync(join(tmpdir(), 'certwright-docs-'));
  try {
    const config = loadConfig({ env: {}, overrides: { dataDir, log: { level: 'silent' } } });
    const kernel = await Kernel.boot({ config, logger: pino({ level: 'silent' }), startPlugins: false });
    const openapi = kernel.app.swagger();
    await kernel.stop();
    const manifests = discoverPlugins(PROJECT_ROOT, [])
      .filter((c) => c.source === 'built-in')
      .map((c) => readManifest(c.dir))
      .flatMap((check) => (check.ok ? [check.manifest] : []));
    return {
      'docs/openapi.json': `${JSON.stringify(openapi, null, 2)}\n`,
      'docs/plugins.md': pluginReference(manifests),
      'docs/events.md': eventCodeReference(),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
