import type { ConfigObject } from '@certwright/sdk';
import { SECRET_MASK, type ConfigRegistry, type RegisteredType } from '../registry.js';
import { code, fieldTable, inline, multiline } from './adoc.js';
import { AnchorIds } from './anchors.js';
import { objectRows } from './fields.js';

export const COOKBOOK_TITLE = 'Certwright configuration cookbook';

export interface CookbookInput {
  registry: ConfigRegistry;
  tenant: string;
  /** The types the caller may read, in registry order (the route filters them by permission). */
  types: readonly RegisteredType[];
  now: Date;
  version: string;
}

function typeSection(t: RegisteredType, objects: readonly ConfigObject[], anchors: AnchorIds): string {
  const { decl } = t;
  const parts = [`== ${inline(decl.title)}`];
  if (decl.description) parts.push(multiline([decl.description]));
  parts.push(`API path: ${code(decl.basePath)}`);
  if (objects.length === 0) parts.push('No objects.');
  for (const object of objects) {
    const name = String(object[t.key]);
    parts.push(`[[${anchors.of(decl.type, name)!}]]\n=== ${inline(name)}\n\n${fieldTable(objectRows(t, object, anchors))}`);
  }
  return parts.join('\n\n');
}

/**
 * The configuration cookbook (GET /api/v1/adoc): one section per readable type, one subsection and
 * table per object, references as links between them. Objects come from `registry.list`, whose secrets
 * are already masked.
 */
export async function generateCookbook(input: CookbookInput): Promise<string> {
  const listed: [RegisteredType, ConfigObject[]][] = [];
  for (const t of input.types) listed.push([t, await input.registry.list(t.decl.type, input.tenant)]);
  // Every anchor first: a reference may point to a type that comes later in the document.
  const anchors = new AnchorIds();
  for (const [t, objects] of listed) for (const object of objects) anchors.assign(t.decl.type, String(object[t.key]));
  const header = [
    `= ${COOKBOOK_TITLE}`,
    ':toc: left',
    ':toclevels: 2',
    ':sectanchors:',
    ':sectnums!:',
    ':nofooter:',
  ].join('\n');
  const preamble = [
    `Generated at ${inline(input.now.toISOString())} by Certwright ${inline(input.version)}.`,
    `It holds the configuration sections the requesting principal may read; secrets are shown as +${SECRET_MASK}+.`,
  ].join(' +\n');
  return `${[header, preamble, ...listed.map(([t, objects]) => typeSection(t, objects, anchors))].join('\n\n')}\n`;
}
