import type { FastifyReply } from 'fastify';

/**
 * Whether a request's Accept names application/json and no wildcard (`*` / `*` or `application/*`): what the
 * vendor's OpenAPI-generated v2 Go SDK sends (selectHeaderAccept), where its MCP server (fetch), curl and
 * browsers send a wildcard. The few answers whose shape the two clients read differently (a list of member
 * identifiers, whoami's teams) follow it, and say so with `Vary: Accept`.
 */
export function acceptsExactlyJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.toLowerCase().split(',').map((t) => t.split(';')[0]!.trim());
  return types.includes('application/json') && !types.includes('*/*') && !types.includes('application/*');
}

/** Adds Accept to the answer's Vary header (once), for an answer shaped by acceptsExactlyJson. */
export function varyOnAccept(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const given = vary === undefined ? [] : String(vary).split(',').map((v) => v.trim()).filter(Boolean);
  if (!given.some((v) => v === '*' || v.toLowerCase() === 'accept')) reply.header('vary', [...given, 'Accept'].join(', '));
}
