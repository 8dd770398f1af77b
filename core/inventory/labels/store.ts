import type { Knex } from 'knex';
import { isMysql } from '../../db/dialect.js';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { localizedOf, type LocalizedText } from '../../http/localized-text.js';
import { checkRegex } from '../../query/regex.js';
import type { KeyValue } from '../types.js';

export type { LocalizedText } from '../../http/localized-text.js';

/** A label definition as given (create / update). */
export interface LabelInput {
  name: string;
  regex?: string | null;
  displayName?: LocalizedText[] | null;
  description?: LocalizedText[] | null;
}

/** A label definition as answered (GET /api/v1/certificate/labels/…). */
export interface Label {
  _id: string;
  name: string;
  regex: string | null;
  displayName: LocalizedText[];
  description: LocalizedText[];
}

interface LabelRow {
  id: string;
  name: string;
  regex: string | null;
  display_name: string;
  description: string;
}

export const LABEL_NAME = /^[A-Za-z0-9._-]{1,191}$/;
export const MAX_REGEX_LENGTH = 1024;
/** How long a node trusts its cached definitions (another node's label writes show within this). */
export const LABEL_CACHE_MS = 5_000;

/** The full-match form of a label regex, or a LBL-002 naming why it cannot be used. */
export function compileLabelRegex(regex: string): RegExp {
  if (regex.length > MAX_REGEX_LENGTH) throw new ProblemError('LBL-002', { message: `The regex is longer than ${MAX_REGEX_LENGTH} characters` });
  try {
    // The query engine's guard (no nested or excessive repetition): label regexes run on every
    // imported value, on the event loop.
    checkRegex(regex);
  } catch (err) {
    throw new ProblemError('LBL-002', { message: `The regex does not compile safely: ${(err as Error).message}` });
  }
  try {
    return new RegExp(`^(?:${regex})$`);
  } catch (err) {
    throw new ProblemError('LBL-002', { message: `The regex does not compile: ${(err as Error).message}` });
  }
}

const parseLocalized = (text: string): LocalizedText[] => {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? (v as LocalizedText[]) : [];
  } catch {
    return [];
  }
};

const view = (r: LabelRow): Label => ({
  _id: r.id,
  name: r.name,
  regex: r.regex ?? null,
  displayName: parseLocalized(r.display_name),
  description: parseLocalized(r.description),
});

/** Definitions of one tenant by name: the compiled full-match regex, or null when any value goes. */
type Definitions = Map<string, RegExp | null>;

const notAuthorized = (key: string, why?: string): ProblemError =>
  new ProblemError('LBL-006', { message: `Label element ${key} is not authorized${why ? `: ${why}` : ''}` });

/**
 * Label definitions (inv_labels) and the check every certificate write makes against them: each label
 * key must be a defined label, each value must match the label's regex (whole value). The definitions
 * are read on every import, so they are cached per tenant for LABEL_CACHE_MS and dropped on this node's
 * label writes.
 */
export class LabelStore {
  private readonly cache = new Map<string, { at: number; definitions: Definitions }>();

  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  /** Drops cached definitions (one tenant, or all). */
  invalidate(tenant?: string): void {
    if (tenant === undefined) this.cache.clear();
    else this.cache.delete(tenant);
  }

  async list(tenant: string, db: Knex | Knex.Transaction = this.knex): Promise<Label[]> {
    const rows = (await db('inv_labels').where({ tenant }).orderBy('name').select('id', 'name', 'regex', 'display_name', 'description')) as LabelRow[];
    return rows.map(view);
  }

  async get(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<Label> {
    const row = (await db('inv_labels').where({ tenant, name }).first('id', 'name', 'regex', 'display_name', 'description')) as LabelRow | undefined;
    if (!row) throw this.notFound(name);
    return view(row);
  }

  /** `db`: a transaction to write in (a configuration import's). */
  async create(tenant: string, input: LabelInput, db: Knex | Knex.Transaction = this.knex): Promise<Label> {
    const columns = this.columns(input);
    const now = this.clock();
    const id = newId(now);
    try {
      // A savepoint inside a caller's transaction: a name taken does not abort the caller's.
      await db.transaction(async (trx) => {
        await trx('inv_labels').insert({ id, tenant, ...columns, created_at: now, updated_at: now });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('LBL-004', { message: `A label named "${input.name}" already exists` });
      throw err;
    } finally {
      this.invalidate(tenant);
    }
    return view({ id, ...columns });
  }

  /** Updates the label named in the input (names do not change). */
  async update(tenant: string, input: LabelInput, db: Knex | Knex.Transaction = this.knex): Promise<Label> {
    const columns = this.columns(input);
    const changed = await db('inv_labels')
      .where({ tenant, name: input.name })
      .update({ regex: columns.regex, display_name: columns.display_name, description: columns.description, updated_at: this.clock() });
    this.invalidate(tenant);
    if (changed === 0) throw this.notFound(input.name);
    return this.get(tenant, input.name, db);
  }

  /** Deletes a label no certificate carries (LBL-005 otherwise). */
  async remove(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<void> {
    try {
      await db.transaction(async (trx) => {
        // Locks the definition on MySQL: an import holding a shared lock on it finishes first (and is
        // then seen by the check below), one starting after waits and then finds the label gone.
        const read = trx('inv_labels').where({ tenant, name }).first('id');
        const row = (await (isMysql(trx) ? read.forUpdate() : read)) as { id: string } | undefined;
        if (!row) throw this.notFound(name);
        const used = await trx('inv_certificate_labels').where({ tenant, key: name }).first('certificate_id');
        if (used) throw new ProblemError('LBL-005', { message: `The label "${name}" is set on certificates and cannot be removed` });
        await trx('inv_labels').where({ tenant, id: row.id }).delete();
      });
    } finally {
      this.invalidate(tenant);
    }
  }

  /** The definitions of a tenant (cached). `db`: read through the caller's transaction (SQLite has one connection). */
  async definitions(tenant: string, db: Knex | Knex.Transaction = this.knex): Promise<Definitions> {
    const now = Date.now();
    const cached = this.cache.get(tenant);
    if (cached && now - cached.at < LABEL_CACHE_MS) return cached.definitions;
    const rows = (await db('inv_labels').where({ tenant }).select('name', 'regex')) as { name: string; regex: string | null }[];
    const definitions: Definitions = new Map();
    for (const r of rows) {
      let compiled: RegExp | null = null;
      if (r.regex) {
        try {
          compiled = compileLabelRegex(r.regex);
        } catch {
          // A regex stored before this check (or by hand) that no longer compiles admits no value.
          compiled = /(?!)/;
        }
      }
      definitions.set(r.name, compiled);
    }
    this.cache.set(tenant, { at: now, definitions });
    return definitions;
  }

  /** Throws LBL-006 ("Label element <key> is not authorized…") unless every label is defined and matches its regex. */
  async check(tenant: string, labels: readonly KeyValue[], db: Knex | Knex.Transaction = this.knex): Promise<void> {
    if (labels.length === 0) return;
    checkAgainst(await this.definitions(tenant, db), labels);
  }

  /**
   * Inside a certificate write: confirms the labels' definitions still exist, with a shared lock on MySQL
   * so a concurrent delete of one of them waits for this write (and then sees the label in use).
   */
  async confirm(trx: Knex.Transaction, tenant: string, labels: readonly KeyValue[]): Promise<void> {
    if (labels.length === 0) return;
    const names = [...new Set(labels.map((l) => l.key))];
    const read = trx('inv_labels').where({ tenant }).whereIn('name', names).select('name');
    const rows = (await (isMysql(trx) ? read.forShare() : read)) as { name: string }[];
    if (rows.length === names.length) return;
    this.invalidate(tenant);
    const found = new Set(rows.map((r) => r.name));
    throw notAuthorized(names.find((n) => !found.has(n))!);
  }

  private columns(input: LabelInput): Omit<LabelRow, 'id'> {
    if (typeof input.name !== 'string' || !LABEL_NAME.test(input.name)) {
      throw new ProblemError('LBL-002', { message: 'A label name is 1 to 191 characters among letters, digits, ".", "_" and "-"' });
    }
    const regex = input.regex === undefined || input.regex === null || input.regex === '' ? null : input.regex;
    if (regex !== null) compileLabelRegex(regex);
    return {
      name: input.name,
      regex,
      display_name: JSON.stringify(localizedOf(input.displayName)),
      description: JSON.stringify(localizedOf(input.description)),
    };
  }

  private notFound(name: string): ProblemError {
    return new ProblemError('LBL-003', { message: `No label is named "${name}"` });
  }
}

/** The label check against given definitions (see LabelStore.check). */
export function checkAgainst(definitions: Definitions, labels: readonly KeyValue[]): void {
  for (const l of labels) {
    const regex = definitions.get(l.key);
    if (regex === undefined) throw notAuthorized(l.key);
    if (regex !== null && !regex.test(l.value)) throw notAuthorized(l.key, `the value "${l.value}" does not match the label's pattern`);
  }
}
