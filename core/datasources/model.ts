/** The kinds of datasource: a JSON endpoint, a directory search, a database SELECT. */
export const DATASOURCE_KINDS = ['http', 'ldap', 'database'] as const;
export type DatasourceKind = (typeof DATASOURCE_KINDS)[number];

export interface HttpSettings {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  recordsPath?: string;
  authentication?: 'none' | 'basic' | 'bearer' | 'header';
  authenticationHeader?: string;
}

export interface LdapSettings {
  url: string;
  baseDn: string;
  scope?: 'base' | 'one' | 'sub';
  filter?: string;
  attributes?: string[];
  bindDn?: string;
}

export interface DatabaseSettings {
  url: string;
  query: string;
  parameters?: (string | number | boolean | null)[];
}

/** A datasource as stored (defaults filled in by the type's normalize hook). */
export interface Datasource {
  name: string;
  description?: string;
  kind: DatasourceKind;
  http?: HttpSettings;
  ldap?: LdapSettings;
  database?: DatabaseSettings;
  credential?: string;
  keyField: string;
  refresh?: string | null;
  timeoutMs?: number;
  maxRecords?: number;
}

/** One record: a flat or nested JSON object (a JSON item, an LDAP entry, a row). */
export type DatasourceRecord = Record<string, unknown>;

/** The opened secret a fetcher authenticates with (never logged, never answered). */
export interface FetchSecret {
  login?: string;
  password?: string;
  secret?: string;
}

/** Bounds of one fetch: its deadline and how many records it may bring back. */
export interface FetchBounds {
  timeoutMs: number;
  maxRecords: number;
}
