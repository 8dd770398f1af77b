/**
 * What the DCV tests ask of a kernel and its BIND9: TXT values as the server answers them now, a domain's state
 * once a run has settled (through the lifecycle routes), and the DCV events about a domain since a moment.
 */
import { Resolver } from 'node:dns/promises';
import type { Kernel } from '../../core/kernel.js';
import type { caller } from './security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface DcvTestTools {
  txt(name: string): Promise<string[]>;
  settled(policy: string, domain: string, since: number): Promise<Json>;
  eventsOf(domain: string, since: number): Promise<Json[]>;
}

export function dcvTestTools(kernel: Kernel, admin: ReturnType<typeof caller>, bindPort: number): DcvTestTools {
  return {
    async txt(name) {
      const r = new Resolver({ timeout: 2000, tries: 1 });
      r.setServers([`127.0.0.1:${bindPort}`]);
      try {
        return (await r.resolveTxt(name)).map((chunks) => chunks.join(''));
      } catch {
        return [];
      }
    },
    /** The domain's state once a run started after `since` has ended (60 s at most). */
    async settled(policy, domain, since) {
      for (let i = 0; i < 300; i++) {
        const res = await admin('GET', `/api/v1/dcv/lifecycle/policies/${policy}`);
        const state = (res.json() as Json).domains?.find((d: Json) => d.domain === domain);
        if (state && state.status !== 'running' && state.status !== 'never' && (state.lastRunAt ?? 0) >= since) return state;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`${policy}/${domain} did not settle`);
    },
    async eventsOf(domain, since) {
      const rows = (await kernel.db.knex('events').where({ module: 'dcv', object_id: domain }).andWhere('created_at', '>=', since).orderBy('seq').select('code', 'status', 'payload')) as Json[];
      return rows.map((r) => ({ code: r.code, status: r.status, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
    },
  };
}
