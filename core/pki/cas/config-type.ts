import type { Knex } from 'knex';
import { unlessMissing } from '../../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import type { CaChange, CaInput, CaService } from './service.js';
import type { CaRecord } from './store.js';
import { view } from './view.js';

/** The CA as its POST takes it: the certificate and the settings of its view; what is derived from the certificate is left out. */
const PORTABLE = ['name', 'certificate', 'trusted', 'trustedForClientAuthentication', 'crlUrl', 'responderUrl', 'outdatedRevocationStatusPolicy', 'public', 'downloadable', 'refresh', 'timeout'] as const;
const body = (ca: CaRecord): ConfigObject => {
  const shown = view(ca);
  return Object.fromEntries(PORTABLE.map((field) => [field, shown[field]]));
};
const stored = (ca: CaRecord): StoredConfigObject => ({ id: ca.id, name: ca.name, body: body(ca), createdAt: 0, updatedAt: 0 });
const input = (o: ConfigObject): CaInput => o as unknown as CaInput;

/**
 * The CAs' own table (pki_cas, read by the trust chains and the CRL cache) through their service bound to the
 * registry's handle: the routes' checks, CA-* events in the same transaction (events.byStore). The trust chains
 * and the CRL cache hear of each change once it committed (afterChange), not inside the import's transaction.
 */
function caStore(cas: CaService, pending: Map<string, CaChange>): ConfigTypeStore {
  const bound = (db: unknown) => cas.within(db as Knex.Transaction, (change) => pending.set(`${change.tenant}/${change.ca.name}`, change));
  return {
    list: async (tenant, db) => (await bound(db).records(tenant)).map(stored),
    get: async (tenant, name, db) => unlessMissing(async () => stored(await bound(db).require(tenant, name)), 'CA-003'),
    insert: async (tenant, _name, object, db, by) => {
      try {
        await bound(db).create(tenant, input(object), by ?? null);
      } catch (err) {
        if (err instanceof ProblemError && err.code === 'CA-004' && (await bound(db).exists(tenant, object.name as string))) return null;
        throw err;
      }
      return stored(await bound(db).require(tenant, object.name as string));
    },
    update: async (tenant, name, object, db, by) => {
      await bound(db).update(tenant, name, input(object), by ?? null);
      return true;
    },
    remove: async (tenant, name, db) => {
      await bound(db).remove(tenant, name, null);
      return true;
    },
  };
}

const FLAG = { type: 'boolean' } as const;
const URL_FIELD = { type: ['string', 'null'], maxLength: 2048 } as const;
const DURATION = { type: ['string', 'null'], maxLength: 64 } as const;

/**
 * Certificate authorities (/api/v1/cas/) on the configuration registry: exported and imported as their
 * certificate and settings, in the cookbook. The routes stay theirs (ca-routes.ts says why).
 */
export function caType(cas: CaService): ConfigObjectType {
  const pending = new Map<string, CaChange>();
  return {
    type: 'ca',
    title: 'Certificate authorities',
    noun: 'certificate authority',
    exportKey: 'certificateAuthorities',
    description: 'CA certificates the platform knows: trust anchors and issuers, with their CRL and OCSP locations.',
    basePath: '/api/v1/cas/',
    tag: 'ca',
    section: 'cas',
    errorFamily: 'CA',
    routes: 'own',
    update: 'replace',
    events: { module: 'pki', created: 'CA-CREATE', updated: 'CA-UPDATE', deleted: 'CA-DELETE', byStore: true },
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
      certificate: { type: 'string', minLength: 1, maxLength: 200_000, description: 'The CA certificate (PEM)' },
      trusted: FLAG,
      trustedForClientAuthentication: FLAG,
      crlUrl: URL_FIELD,
      responderUrl: URL_FIELD,
      outdatedRevocationStatusPolicy: { type: 'string', minLength: 1, maxLength: 32 },
      public: FLAG,
      downloadable: FLAG,
      refresh: DURATION,
      timeout: DURATION,
    },
    required: ['name', 'certificate'],
    store: caStore(cas, pending),
    hooks: {
      afterChange: async ({ name }, { tenant }) => {
        const change = pending.get(`${tenant}/${name}`);
        pending.delete(`${tenant}/${name}`);
        if (change) await cas.notify(change);
      },
    },
  };
}
