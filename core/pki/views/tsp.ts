import type { TspInfo, TspTokenInfo } from '../tsp/decode.js';
import { tspSchema } from '../tsp/schema.js';
import { certificateView } from './x509.js';

/** A token with its embedded certificates (and the signer's) as the x509 decoder answers them. */
function tokenView(token: TspTokenInfo) {
  const { certificate, ...signer } = token.signer;
  return { ...token, signer: certificate ? { ...signer, certificate: certificateView(certificate) } : signer, certificates: token.certificates.map(certificateView) };
}

/**
 * A decoded time-stamp query, reply or token. A granted reply also answers the token's `policy` at the
 * top, where Horizon's clients read it (the MCP server's decode_tsa: policy, status, failInfo).
 */
export function tspView(info: TspInfo): Record<string, unknown> {
  if (info.kind === 'query') return info as unknown as Record<string, unknown>;
  if (!info.token) return info as unknown as Record<string, unknown>;
  const view: Record<string, unknown> = { ...info, token: tokenView(info.token) };
  if (info.kind === 'reply') view.policy = info.token.policy;
  return view;
}

export const tspViewSchema = {
  ...tspSchema,
  properties: { ...tspSchema.properties, policy: { type: 'string', description: "queries: the requested policy; replies: the token's policy OID" } },
} as const;
