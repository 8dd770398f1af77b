import type { DatasourceKind } from './model.js';

/**
 * The skeleton of a datasource of each kind, as a form would prefill it (POST /api/v1/datasource/flows/template):
 * every field with its default or an example to replace. Credentials are named, never held.
 */
export function datasourceTemplate(kind: DatasourceKind): Record<string, unknown> {
  const common = { name: `my-${kind}-datasource`, description: '', kind, refresh: null, timeoutMs: 10_000, maxRecords: 1000 };
  switch (kind) {
    case 'http':
      return {
        ...common,
        keyField: 'hostname',
        http: { url: 'https://cmdb.example.com/api/hosts', method: 'GET', headers: {}, recordsPath: 'items', authentication: 'none' },
      };
    case 'ldap':
      return {
        ...common,
        keyField: 'cn',
        ldap: { url: 'ldaps://ldap.example.com', baseDn: 'ou=hosts,dc=example,dc=com', scope: 'sub', filter: '(objectClass=device)', attributes: ['cn', 'owner'] },
      };
    case 'database':
      return {
        ...common,
        keyField: 'hostname',
        database: { url: 'mysql://reader@db.example.com:3306/cmdb', query: 'SELECT hostname, owner FROM hosts WHERE active = ?', parameters: [1] },
      };
  }
}
