import type { Knex } from 'knex';
import { unlessTaken } from '../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, JsonSchema, StoredConfigObject } from '@certwright/sdk';
import { ProblemError } from '../errors/index.js';
import type { StoredProfile } from './model.js';
import type { ProfileRepository } from './repository.js';
import { profileInputSchema } from './schema.js';
import type { CertificateProfile } from './types.js';
import { checkProfile } from './validate.js';

/** The profile in Certwright's own form, as its POST takes it: no times (they are the instance's own). */
function body(s: StoredProfile): ConfigObject {
  const { createdAt: _created, updatedAt: _updated, ...profile } = s.profile;
  return profile as unknown as ConfigObject;
}
const stored = (s: StoredProfile): StoredConfigObject => ({ id: s.id, name: s.profile.name, body: body(s), createdAt: s.profile.createdAt ?? 0, updatedAt: s.profile.updatedAt ?? 0 });

/**
 * The profiles' own table (certificate_profiles, read by the request workflows) through their repository, on
 * the registry's handle: each write is the routes' write (a savepoint inside an import's transaction), with
 * its PROFILE-* event and payload (events.byStore).
 */
function profileStore(repository: ProfileRepository, clock: () => number): ConfigTypeStore {
  const checked = (db: unknown, tenant: string, object: ConfigObject): Promise<CertificateProfile> => checkProfile(db as Knex, clock, tenant, object);
  return {
    list: async (tenant, db) => (await repository.list(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repository.find(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, object, db, by) => unlessTaken(async () => stored(await repository.create(tenant, await checked(db, tenant, object), by ?? null, db as Knex)), 'PRF-004'),
    update: async (tenant, _name, object, db, by) => {
      await repository.update(tenant, await checked(db, tenant, object), by ?? null, db as Knex);
      return true;
    },
    remove: async (tenant, name, db) => {
      await repository.remove(tenant, name, null, db as Knex);
      return true;
    },
  };
}

/**
 * Certificate profiles (/api/v1/certificate/profiles/) on the configuration registry: exported and imported
 * in Certwright's own form, in the cookbook, their connector, password policies and labels checked as
 * references (one a profile names cannot be deleted). The routes stay theirs (routes.ts says why).
 */
export function profileType(repository: ProfileRepository, clock: () => number): ConfigObjectType {
  const { _id: _i, version: _v, createdAt: _c, updatedAt: _u, ...properties } = (profileInputSchema as { properties: Record<string, JsonSchema> }).properties;
  return {
    type: 'profile',
    title: 'Certificate profiles',
    noun: 'certificate profile',
    exportKey: 'profiles',
    description: 'What may be enrolled through which PKI connector, by whom, with which subject, SANs, key and validity.',
    basePath: '/api/v1/certificate/profiles/',
    tag: 'profiles',
    section: 'profiles',
    errorFamily: 'PRF',
    routes: 'own',
    update: 'replace',
    events: { module: 'profiles', created: 'PROFILE-CREATED', updated: 'PROFILE-UPDATED', deleted: 'PROFILE-DELETED', byStore: true },
    properties,
    required: ['name', 'pkiConnector'],
    serverOwned: ['version', 'createdAt', 'updatedAt'],
    references: [
      { field: 'pkiConnector', type: 'pki-connector' },
      { field: 'keyPolicy.passwordPolicy', type: 'password-policy' },
      { field: 'challenge.passwordPolicy', type: 'password-policy' },
      { field: 'labels.label', type: 'label' },
    ],
    store: profileStore(repository, clock),
    hooks: {
      // The routes' whole check (validate.ts): its PRF-002 reason is the import's conflict reason.
      validate: async (object, { tenant, db }) => {
        try {
          await checkProfile(db as Knex, clock, tenant, object);
        } catch (err) {
          if (err instanceof ProblemError && err.code === 'PRF-002') return err.detail ?? err.message;
          throw err;
        }
        return undefined;
      },
    },
  };
}
