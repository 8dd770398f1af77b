import type { TspInfo } from '../tsp/decode.js';
import { tspSchema } from '../tsp/schema.js';

/**
 * A decoded time-stamp query, reply or token. A granted reply also answers the token's `policy` at the
 * top, where Horizon's clients read it (the MCP server's decode_tsa: policy, status, failInfo).
 */
export function tspView(info: TspInfo): TspInfo & { policy?: string } {
  if (info.kind === 'reply' && info.token) return { ...info, policy: info.token.policy };
  return info;
}

export const tspViewSchema = {
  ...tspSchema,
  properties: { ...tspSchema.properties, policy: { type: 'string', description: "queries: the requested policy; replies: the token's policy OID" } },
} as const;
