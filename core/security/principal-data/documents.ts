import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';

/** Whose documents: every read and write is scoped to one principal of one tenant. */
export interface Owner {
  tenant: string;
  principal: string;
}

/** A stored document as the API answers it: the client's JSON body plus its name. */
export type NamedDocument = Record<string, unknown> & { name: string };

type Table = 'security_principal_queries' | 'security_dashboards';

interface Row {
  name: string;
  body: string;
}

const view = (r: Row): NamedDocument => ({ ...(JSON.parse(r.body) as Record<string, unknown>), name: r.name });

/**
 * Per-principal JSON documents (saved queries, dashboards): one row per (tenant, principal, name), the
 * body stored as the client sent it minus `name`. Writes rely on the unique key, never on a prior read,
 * so concurrent requests cannot create twins.
 */
export class PrincipalDocuments {
  constructor(
    private readonly knex: Knex,
    private readonly table: Table,
    private readonly clock: () => number,
    /** Most documents one principal may keep (bounds what any authenticated caller can store). */
    readonly maxPerPrincipal: number,
  ) {}

  async list(owner: Owner): Promise<NamedDocument[]> {
    const rows = (await this.knex(this.table).where(owner).select('name', 'body').orderBy('name')) as Row[];
    return rows.map(view);
  }

  async get(owner: Owner, name: string): Promise<NamedDocument | undefined> {
    const row = (await this.knex(this.table).where({ ...owner, name }).select('name', 'body').first()) as Row | undefined;
    return row ? view(row) : undefined;
  }

  /** 'created', 'exists' (the name is taken), or 'full' (the principal holds maxPerPrincipal already). */
  async insert(owner: Owner, name: string, body: Record<string, unknown>): Promise<'created' | 'exists' | 'full'> {
    const row = (await this.knex(this.table).where(owner).count({ n: '*' }).first()) as { n: number | string };
    if (Number(row.n) >= this.maxPerPrincipal) return 'full';
    const now = this.clock();
    try {
      await this.knex(this.table).insert({ id: newId(now), ...owner, name, body: JSON.stringify(body), created_at: now, updated_at: now });
      return 'created';
    } catch (err) {
      if (isUniqueViolation(err)) return 'exists';
      throw err;
    }
  }

  /** Whether a document of that name existed (and now holds `body`). */
  async update(owner: Owner, name: string, body: Record<string, unknown>): Promise<boolean> {
    const n = await this.knex(this.table).where({ ...owner, name }).update({ body: JSON.stringify(body), updated_at: this.clock() });
    return Number(n) > 0;
  }

  /** Replaces the named document or creates it: 'replaced', 'created' or 'full'. */
  async save(owner: Owner, name: string, body: Record<string, unknown>): Promise<'created' | 'replaced' | 'full'> {
    // Update, else insert; a concurrent insert or delete between the two only means another round.
    for (let round = 0; round < 5; round++) {
      if (await this.update(owner, name, body)) return 'replaced';
      const inserted = await this.insert(owner, name, body);
      if (inserted !== 'exists') return inserted;
    }
    throw new Error(`${this.table}: "${name}" kept being created and deleted concurrently`);
  }

  async remove(owner: Owner, name: string): Promise<boolean> {
    return Number(await this.knex(this.table).where({ ...owner, name }).delete()) > 0;
  }
}
