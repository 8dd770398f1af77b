import type { Knex } from 'knex';

/**
 * The query languages (client-compat §4): HCQL (certificates), HRQL (requests), HEQL (events) and HDQL
 * (discovery events) share one grammar and one compiler; each language is a table of fields and
 * specials (`QueryLanguage`), and the dictionary endpoints are generated from the same table.
 */

/** Comparison operators after normalisation (`=` → equals, `<` → before, `>` → after, `!=` → not equals). */
export type Operator =
  | 'equals'
  | 'not equals'
  | 'matches'
  | 'contains'
  | 'in'
  | 'not in'
  | 'within'
  | 'before'
  | 'after'
  | 'exists'
  | 'not exists';

/** A value as written; its meaning (date, number, string) is decided by the field it is compared with. */
export type Literal =
  | { kind: 'string'; value: string; offset: number }
  | { kind: 'number'; value: number; raw: string; offset: number }
  /** `30d`, `-24h`, `5m`, `60s`: milliseconds from now (negative = in the past). */
  | { kind: 'relative'; ms: number; raw: string; offset: number }
  /** Bare words: `now`, `today`, `true`, `false`, or an unquoted token a special accepts. */
  | { kind: 'word'; value: string; offset: number };

export type QueryNode =
  | { kind: 'all' }
  | { kind: 'and'; children: QueryNode[] }
  | { kind: 'or'; children: QueryNode[] }
  | { kind: 'not'; child: QueryNode }
  /**
   * `field op value`, `field in [..]`, `field exists`; `values` is empty for exists / not exists.
   * `field` is the field's query name (`dn`, `label`); `key` the key of a parametric one (`label.env`
   * → field `label`, key `env`, case kept). Nodes built by hand may also write `field: 'label.env'`.
   */
  | { kind: 'compare'; field: string; key?: string; operator: Operator; values: Literal[]; offset: number }
  /** `status is [not] valid`, `certificate is [not] selfsigned`, `trigger.results has [no] failure`. */
  | { kind: 'special'; subject: string; verb: 'is' | 'has'; negated: boolean; value: string; offset: number };

export type FieldType = 'string' | 'date' | 'number' | 'boolean';

/** Where a field's values live. */
export type FieldStorage =
  /** A column of the main table. `hashKey`: equality goes through this indexed sha256-hex column. */
  | { kind: 'column'; column: string; hashKey?: string }
  /**
   * A member of a JSON object stored as text in a main-table column, named by the key of a parametric
   * field (`detail.actorId`; dots go deeper). Not indexed: it narrows what other conditions select.
   */
  | { kind: 'json'; column: string }
  /**
   * A side table joined by `certificate_id`-like foreign key (`EXISTS (…)`), one row per value.
   * `keyColumn`: for parametric fields (`label.<key>`) the column holding the key. `fixed`: constant
   * column values (a facet name). `lowercase`: values are stored lower-cased in `valueColumn`, so
   * compared values are lower-cased too. `reversedColumn`: the lower-cased value reversed, indexed, so
   * suffix searches (`matches "\.example\.com$"`) become prefix ranges.
   */
  | {
      kind: 'side';
      table: string;
      foreignKey: string;
      valueColumn: string;
      keyColumn?: string;
      fixed?: Record<string, string>;
      lowercase?: boolean;
      reversedColumn?: string;
      /** The value column is numeric text (e.g. ports): compared as numbers. */
      numeric?: boolean;
      /** Tenant column of the side table, matched to the main row's; default `tenant`. */
      tenantColumn?: string;
      /**
       * A value appears at most once per main row (and key), and the side table has an index
       * `(tenant, [key | fixed columns], value, foreignKey)`: an equality then reads the matching ids in
       * order, so a query made of that one equality may be answered by joining from the side table
       * (see querySource in source.ts).
       */
      distinct?: boolean;
    };

export interface FieldDefinition {
  /** Lower-case dotted query name: `dn`, `valid.until`; for parametric fields the prefix (`label`). */
  name: string;
  /** `label.<key>`: the part after the prefix is a key (case kept). */
  parametric?: boolean;
  type: FieldType;
  storage: FieldStorage;
  /** camelCase name of the result property (sortedBy, fields, aggregate groupBy); absent = not projectable. */
  property?: string;
  description: string;
  /** Allowed operators; defaults by type (DEFAULT_OPERATORS in fields.ts). */
  operators?: readonly Operator[];
  sortable?: boolean;
  groupable?: boolean;
  /** Allowed values, for the dictionary and for validation (e.g. revocation reasons). */
  values?: readonly string[];
  /** Canonical form of a compared string value (serials: lower-case hex without colons). */
  normalize?: (value: string) => string;
}

export interface CompileContext {
  knex: Knex;
  /** Epoch ms the query is evaluated at (`now`, `today`, relative dates, status). */
  now: number;
  /** Alias or name of the main table in the query being built. */
  table: string;
  /** The tenant the main query is narrowed to: side-table conditions then compile to uncorrelated `IN` lists. */
  tenant?: string;
  /**
   * Positive side-table conditions as correlated `EXISTS` even with the tenant known: the rows are read
   * along the main table's id and the reader stops after a page, so each row is probed instead of the
   * whole side range being collected first (chosen by querySource when a probe finds the range dense).
   */
  walk?: boolean;
}

/** A `subject is|has [not|no] value` special: each accepted value adds a where clause. */
export interface SpecialDefinition {
  subject: string;
  verb: 'is' | 'has';
  description: string;
  /** value (lower-case) → builder that narrows `qb` to the rows for which the special holds. */
  values: Record<string, (qb: Knex.QueryBuilder, ctx: CompileContext) => void>;
}

export interface QueryLanguage {
  /** HCQL, HRQL, HEQL, HDQL. */
  name: string;
  /** Main table and its id / tenant columns. */
  table: string;
  idColumn: string;
  tenantColumn: string;
  fields: readonly FieldDefinition[];
  specials: readonly SpecialDefinition[];
}
