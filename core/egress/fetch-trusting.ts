import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';

/** Agents by CA bundle: a handful of bundles at most (one per private ACME CA), each keeping its connections. */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 8;

function agentFor(caPem: string): Agent {
  let agent = agents.get(caPem);
  if (!agent) {
    if (agents.size >= MAX_AGENTS) {
      const [oldest, dropped] = agents.entries().next().value as [string, Agent];
      agents.delete(oldest);
      void dropped.close().catch(() => undefined);
    }
    agent = new Agent({ connect: { ca: caPem } });
    agents.set(caPem, agent);
  }
  return agent;
}

/**
 * A direct fetch whose TLS trusts only `caPem` (SDK EgressFetchOptions.caPem): undici's fetch with an Agent
 * carrying the bundle, as Node 20's global fetch cannot be handed a trust anchor.
 */
export async function fetchTrusting(caPem: string, url: URL | string, init: RequestInit = {}): Promise<Response> {
  // The caller's dispatcher, if any, is replaced: it would not trust the bundle.
  const response = await undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: agentFor(caPem) });
  return response as unknown as Response;
}
