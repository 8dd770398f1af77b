import { DISCOVERY_EVENT_CODES } from '../discovery/types.js';
import { EVENT_CATALOGUE, type EventCodeEntry } from '../events/catalogue.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function section(entry: EventCodeEntry): string[] {
  const out = [`### \`${entry.code}\``, '', cell(entry.description), ''];
  out.push(`- module: \`${entry.module}\``, `- status: ${entry.statuses.map((s) => `\`${s}\``).join(', ')}`);
  if (entry.objectType) out.push(`- object: \`${entry.objectType}\` (objectId names it)`);
  if (entry.reserved) out.push('- reserved: triggers react to it; raised by workflows of a later version');
  out.push('');
  const members = Object.entries(entry.payload);
  if (members.length > 0) {
    out.push('| payload | holds |', '|---|---|');
    for (const [name, what] of members) out.push(`| \`${name}\` | ${cell(what)} |`);
    out.push('');
  }
  return out;
}

/**
 * docs/events.md: every event code (core/events/catalogue.ts) by module, with its payload, and the codes
 * of discovery events. Written by `npx certwright docs` with the API reference.
 */
export function eventCodeReference(): string {
  const out = [
    '# Event codes',
    '',
    'Generated from core/events/catalogue.ts by `npx certwright docs`. Do not edit.',
    '',
    'Every event has `code`, `module`, `status` (success, failure or warning), `principal` (who acted; absent for',
    'system events), `objectType` and `objectId` (what it is about), `payload` (below) and `createdAt`; it is',
    'searched with HEQL (`POST /api/v1/events/search`). Plugins raise their own codes, with their id as module.',
    '',
  ];
  const modules = [...new Set(EVENT_CATALOGUE.map((e) => e.module))].sort();
  for (const module of modules) {
    out.push(`## ${module}`, '');
    for (const entry of [...EVENT_CATALOGUE].filter((e) => e.module === module).sort((a, b) => a.code.localeCompare(b.code))) out.push(...section(entry));
  }
  out.push('## Discovery events', '', 'Discovery clients report their own codes (the set is open; `POST /api/v1/discovery/events/search`, HDQL). Known codes:', '');
  out.push(DISCOVERY_EVENT_CODES.map((c) => `\`${c}\``).join(', '), '');
  return `${out.join('\n').trimEnd()}\n`;
}
