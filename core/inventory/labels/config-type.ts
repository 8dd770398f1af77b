import type { Knex } from 'knex';
import { unlessMissing, unlessTaken } from '../../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import type { EventStore } from '../../events/store.js';
import { localizedInput } from '../../http/localized-text.js';
import type { Label, LabelInput, LabelStore } from './store.js';

const body = (l: Label): ConfigObject => ({ name: l.name, regex: l.regex, displayName: l.displayName, description: l.description });
// The labels table keeps no times a client sees: the registry's are not answered for labels.
const stored = (l: Label): StoredConfigObject => ({ id: l._id, name: l.name, body: body(l), createdAt: 0, updatedAt: 0 });
const input = (o: ConfigObject): LabelInput => ({
  name: o.name as string,
  regex: (o.regex as string | null | undefined) ?? null,
  displayName: (o.displayName as LabelInput['displayName']) ?? [],
  description: (o.description as LabelInput['description']) ?? [],
});

/**
 * The labels' own table (inv_labels, read by every certificate import) through their store, on the registry's
 * handle, with the LABEL-* events and payload the routes write (events.byStore).
 */
function labelStore(labels: LabelStore, events: EventStore): ConfigTypeStore {
  const record = (db: unknown, tenant: string, code: string, name: string, by: string | null | undefined, regex?: string | null) =>
    events.append({ tenant, code, module: 'inventory', status: 'success', principal: by ?? null, objectType: 'label', objectId: name, payload: regex === undefined ? {} : { regex } }, { trx: db as Knex.Transaction });
  return {
    list: async (tenant, db) => (await labels.list(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => unlessMissing(async () => stored(await labels.get(tenant, name, db as Knex)), 'LBL-003'),
    insert: async (tenant, _name, object, db, by) =>
      unlessTaken(async () => {
        const label = await labels.create(tenant, input(object), db as Knex);
        await record(db, tenant, 'LABEL-CREATED', label.name, by, label.regex);
        return stored(label);
      }, 'LBL-004'),
    update: async (tenant, _name, object, db, by) => {
      const label = await labels.update(tenant, input(object), db as Knex);
      await record(db, tenant, 'LABEL-UPDATED', label.name, by, label.regex);
      return true;
    },
    remove: async (tenant, name, db) => {
      await labels.remove(tenant, name, db as Knex);
      await record(db, tenant, 'LABEL-DELETED', name, null);
      return true;
    },
  };
}

/**
 * Certificate labels (/api/v1/certificate/labels/) on the configuration registry: exported and imported, in
 * the cookbook, named by profiles' label rules (a reference). The routes stay theirs (routes.ts says why).
 */
export function labelType(labels: LabelStore, events: EventStore): ConfigObjectType {
  return {
    type: 'label',
    title: 'Certificate labels',
    noun: 'label',
    exportKey: 'labels',
    description: 'Labels certificates may carry, each value matching its regex.',
    basePath: '/api/v1/certificate/labels/',
    tag: 'labels',
    section: 'labels',
    errorFamily: 'LBL',
    routes: 'own',
    update: 'replace',
    // Labels always tolerated fields they do not know (what a client echoes back from elsewhere).
    unknownFields: 'ignore',
    events: { module: 'inventory', created: 'LABEL-CREATED', updated: 'LABEL-UPDATED', deleted: 'LABEL-DELETED', byStore: true },
    properties: {
      name: { type: 'string', description: '1 to 191 of A-Z a-z 0-9 . _ -' },
      regex: { type: ['string', 'null'], description: 'JavaScript regular expression the whole value must match, at most 1024 characters' },
      displayName: localizedInput,
      description: localizedInput,
    },
    required: ['name'],
    store: labelStore(labels, events),
    hooks: {
      normalize: (object) => body({ _id: '', ...input(object) } as Label),
    },
  };
}
