import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { compileOnce } from '../ajv/compile-once.js';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ConfigHookContext, ConfigObject, ConfigObjectType, ConfigTypeStore } from '@certwright/sdk';
import type { CatalogueEntry } from '../errors/catalogue.js';
import { ProblemError, type ErrorCode } from '../errors/index.js';
import type { EventStore } from '../events/store.js';
import type { SecretBox } from '../secrets/index.js';
import { configProblemEntries, PROBLEM_SUFFIX, type ConfigProblemKind } from './errors.js';
import { cloneJson, getPath, setPath } from './paths.js';
import type { ConfigObjectStore, StoredObject } from './store.js';

/** What every GET answers in place of a secret that is set. */
export const SECRET_MASK = '********';

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: false, coerceTypes: false });
// ajv-formats is CommonJS: its default export is the plugin function.
const addFormats = addFormatsPlugin as unknown as (instance: Ajv) => Ajv;
// `format` keywords (email, uri, date-time…) are checked, as fastify's own validator checks them.
addFormats(ajv);

/** A declared type with what the registry derives from it once. */
export interface RegisteredType {
  readonly decl: ConfigObjectType;
  /** Who declared it: `core` or a plugin id. */
  readonly owner: string;
  readonly key: string;
  readonly secrets: readonly string[];
  /** The secret fields of one object: the static ones and those its hook names (dotted paths). */
  secretsOf(object: ConfigObject): string[];
  /** Its objects' store: its own (decl.store) or the registry's table. */
  readonly store: ConfigTypeStore;
  readonly validateInput: ValidateFunction;
  readonly problems: Readonly<Record<string, CatalogueEntry>>;
  /** JSON Schema of the object as answered (its fields, `_id`, secrets as strings). */
  readonly viewSchema: Record<string, unknown>;
  /** JSON Schema of the object as sent. */
  readonly inputSchema: Record<string, unknown>;
}

export type Db = Knex | Knex.Transaction;

/** Who changes an object: named in its event; its permissions, when known, for the type's hooks. */
export interface Actor {
  principal: string;
  /** Whether the principal holds a permission unfiltered (absent: the platform itself, every permission). */
  holdsUnfiltered?(permission: string): boolean;
}

/** A referrer found for an object about to be deleted: `type/name`. */
type ReferrerSource = (tenant: string, name: string, db: Db) => Promise<string[]>;

const GLOBAL_TENANT = '*';

/**
 * The configuration registry: every configuration type declared once (core/config-objects/types for the
 * core's own, plugins through their registries), and the one implementation of their standard operations:
 * validation, references, secrets, events. Routes (routes.ts), export/import (transfer/) and the cookbook
 * (cookbook/) all go through it, so every type behaves alike.
 */
export class ConfigRegistry {
  private readonly registered = new Map<string, RegisteredType>();
  private readonly referrerSources = new Map<string, ReferrerSource[]>();
  private readonly listeners = new Map<string, ((tenant: string) => void)[]>();

  constructor(
    private readonly deps: {
      knex: Knex;
      store: ConfigObjectStore;
      secrets: SecretBox;
      events: EventStore;
      logger: Logger;
    },
  ) {}

  declare(decl: ConfigObjectType, owner = 'core'): RegisteredType {
    if (this.registered.has(decl.type)) throw new Error(`configuration type "${decl.type}" is already declared by ${this.registered.get(decl.type)!.owner}`);
    if (!decl.basePath.startsWith('/api/v1/') || !decl.basePath.endsWith('/')) throw new Error(`configuration type "${decl.type}": basePath must start with /api/v1/ and end with /`);
    if (!/^[A-Z][A-Z0-9-]*$/.test(decl.errorFamily)) throw new Error(`configuration type "${decl.type}": errorFamily must be upper-case letters, digits and dashes`);
    const key = decl.key ?? 'name';
    if (!decl.properties[key]) throw new Error(`configuration type "${decl.type}": its key field "${key}" has no schema`);
    const secrets = decl.secrets ?? [];
    // Secrets: nullable (null clears), and never required on input (left out = kept on update).
    const properties: Record<string, unknown> = { _id: { type: 'string' } };
    // Other server-owned fields a client may echo back from a GET (decl.serverOwned): accepted, never stored.
    for (const field of decl.serverOwned ?? []) properties[field] = {};
    for (const [field, schema] of Object.entries(decl.properties)) properties[field] = secrets.includes(field) ? { anyOf: [schema, { type: 'null' }] } : schema;
    const inputSchema = {
      type: 'object',
      additionalProperties: decl.unknownFields === 'ignore',
      required: (decl.required ?? [key]).filter((f) => !secrets.includes(f)),
      properties,
    };
    const viewProperties: Record<string, unknown> = { _id: { type: 'string' } };
    for (const [field, schema] of Object.entries(decl.properties)) viewProperties[field] = secrets.includes(field) ? { type: 'string' } : schema;
    const registered: RegisteredType = {
      decl,
      owner,
      key,
      secrets,
      secretsOf: decl.hooks?.secretsOf ? (object) => [...new Set([...secrets, ...decl.hooks!.secretsOf!(object)])] : () => [...secrets],
      store: decl.store ?? this.deps.store.forType(decl.type),
      validateInput: compileOnce(ajv, inputSchema),
      problems: configProblemEntries(decl.errorFamily, decl.noun),
      viewSchema: { type: 'object', required: ['_id', key], properties: viewProperties },
      inputSchema,
    };
    this.registered.set(decl.type, registered);
    return registered;
  }

  /** Drops a plugin's types (it failed after declaring them). */
  removeOwner(owner: string): void {
    for (const [type, t] of this.registered) if (t.owner === owner) this.registered.delete(type);
  }

  get(type: string): RegisteredType | undefined {
    return this.registered.get(type);
  }

  /** Every type, each after the types it references (the order an import applies them in). */
  types(): RegisteredType[] {
    const out: RegisteredType[] = [];
    const seen = new Set<string>();
    const visit = (t: RegisteredType, path: Set<string>): void => {
      if (seen.has(t.decl.type) || path.has(t.decl.type)) return;
      path.add(t.decl.type);
      for (const ref of t.decl.references ?? []) {
        const target = this.registered.get(ref.type);
        if (target) visit(target, path);
      }
      seen.add(t.decl.type);
      out.push(t);
    };
    for (const t of [...this.registered.values()].sort((a, b) => a.decl.type.localeCompare(b.decl.type))) visit(t, new Set());
    return out;
  }

  /** Objects outside the registry that name an object of `type` (a profile naming a terms of service). */
  addReferrerSource(type: string, source: ReferrerSource): void {
    this.referrerSources.set(type, [...(this.referrerSources.get(type) ?? []), source]);
  }

  /** Called after every committed change of a type (caches of running state drop their copy). */
  onChange(type: string, listener: (tenant: string) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  problem(t: RegisteredType, kind: ConfigProblemKind, message?: string, extra?: Record<string, unknown>): ProblemError {
    const code = `${t.decl.errorFamily}-${PROBLEM_SUFFIX[kind]}`;
    return new ProblemError(code as ErrorCode, { ...(message !== undefined ? { message } : {}), ...(extra ? { extra } : {}) }, t.problems[code]!);
  }

  private tenantOf(t: RegisteredType, tenant: string): string {
    return t.decl.scope === 'global' ? GLOBAL_TENANT : tenant;
  }

  private require(type: string): RegisteredType {
    const t = this.registered.get(type);
    if (!t) throw new Error(`no configuration type "${type}" is declared`);
    return t;
  }

  // ---- Reading ----

  /** The object as a client reads it: secrets that are set answered as the mask. */
  view(t: RegisteredType, stored: StoredObject): ConfigObject {
    const out = cloneJson(stored.body);
    for (const path of t.secretsOf(stored.body)) if (getPath(out, path) != null) setPath(out, path, SECRET_MASK);
    return { _id: stored.id, ...out };
  }

  /** The object with its secrets opened: for the platform's own use (never answered). */
  opened(t: RegisteredType, stored: StoredObject): ConfigObject {
    const out = cloneJson(stored.body);
    // A store that seals its secrets itself hands them over open already.
    if (t.store.secretsInClear) return out;
    for (const path of t.secretsOf(stored.body)) {
      const sealed = getPath(out, path);
      if (typeof sealed === 'string') setPath(out, path, this.deps.secrets.openString(sealed, this.aad(t, path)));
    }
    return out;
  }

  async listStored(type: string, tenant: string, db: Db = this.deps.knex): Promise<StoredObject[]> {
    const t = this.require(type);
    return t.store.list(this.tenantOf(t, tenant), db);
  }

  async getStored(type: string, tenant: string, name: string, db: Db = this.deps.knex): Promise<StoredObject | null> {
    const t = this.require(type);
    return t.store.get(this.tenantOf(t, tenant), name, db);
  }

  async list(type: string, tenant: string): Promise<ConfigObject[]> {
    const t = this.require(type);
    return (await this.listStored(type, tenant)).map((s) => this.view(t, s));
  }

  async read(type: string, tenant: string, name: string): Promise<ConfigObject> {
    const t = this.require(type);
    const stored = await this.getStored(type, tenant, name);
    if (!stored) throw this.problem(t, 'unknown', `No ${t.decl.noun} is named "${name}"`);
    return this.view(t, stored);
  }

  /** The object with secrets open, or null: what a consumer (the proxy dispatcher, a channel) uses. */
  async resolve(type: string, tenant: string, name: string): Promise<ConfigObject | null> {
    const t = this.require(type);
    const stored = await this.getStored(type, tenant, name);
    return stored ? this.opened(t, stored) : null;
  }

  /**
   * Every object of a type in its portable form (export/import): no `_id`, secrets open. Only export
   * (which seals them under a passphrase or leaves them out) and the dry-run diff read this form.
   */
  async portable(type: string, tenant: string, db: Db = this.deps.knex): Promise<ConfigObject[]> {
    const t = this.require(type);
    return (await this.listStored(type, tenant, db)).map((s) => this.opened(t, s));
  }

  async portableOne(type: string, tenant: string, name: string, db: Db = this.deps.knex): Promise<ConfigObject | null> {
    const t = this.require(type);
    const stored = await this.getStored(type, tenant, name, db);
    return stored ? this.opened(t, stored) : null;
  }

  /**
   * Whether an input would be accepted as a create (previous null) or an update of `previous` (portable
   * form), without writing: the dry run of an import. Throws the problem a real write would answer.
   */
  async check(type: string, tenant: string, input: unknown, exists: boolean, db: Db = this.deps.knex): Promise<void> {
    const t = this.require(type);
    const name = this.nameOf(t, input);
    const previous = exists ? await this.getStored(type, tenant, name, db) : null;
    await this.prepare(t, tenant, input, previous?.body ?? null, db, previous ? 'update' : 'create', null);
  }

  /** One transaction over the registry's database (an import applies, or dry-runs, a whole document in it). */
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.deps.knex.transaction(fn);
  }

  // ---- Writing ----

  /** Creates an object; `db` is the import's transaction. */
  async create(type: string, tenant: string, input: unknown, actor: Actor, db?: Knex.Transaction): Promise<ConfigObject> {
    const t = this.require(type);
    const body = await this.prepare(t, tenant, input, null, db ?? this.deps.knex, 'create', actor);
    const name = body[t.key] as string;
    const stored = await t.store.insert(this.tenantOf(t, tenant), name, body, db ?? this.deps.knex, actor.principal);
    if (!stored) throw this.problem(t, 'exists', `A ${t.decl.noun} named "${name}" already exists`);
    await this.committed(t, tenant, 'create', name, stored, Object.keys(body).filter((f) => f !== t.key), actor, db);
    return this.view(t, stored);
  }

  /**
   * A first-start default (the `default` storage, the system configuration entries): created when absent,
   * validated as any object, but not an event: no principal made it (as the `Default` password policy's
   * seed is not). false when it existed already (another node seeded it first).
   */
  async seed(type: string, tenant: string, object: ConfigObject): Promise<boolean> {
    const t = this.require(type);
    const name = this.nameOf(t, object);
    if (await t.store.get(this.tenantOf(t, tenant), name, this.deps.knex)) return false;
    const body = await this.prepare(t, tenant, object, null, this.deps.knex, 'create', null);
    return (await t.store.insert(this.tenantOf(t, tenant), name, body, this.deps.knex, null)) !== null;
  }

  /** Updates the object the body names (a PUT on the collection); upserts on types that have no POST. */
  async update(type: string, tenant: string, input: unknown, actor: Actor, db?: Knex.Transaction): Promise<ConfigObject> {
    const t = this.require(type);
    // A malformed body is refused as such, whether or not the object it names exists.
    this.checkShape(t, input);
    const run = async (trx: Knex.Transaction): Promise<ConfigObject> => {
      const name = this.nameOf(t, input);
      const previous = await t.store.get(this.tenantOf(t, tenant), name, trx);
      if (!previous) {
        if (t.decl.creatable === false) return this.create(type, tenant, input, actor, trx);
        throw this.problem(t, 'unknown', `No ${t.decl.noun} is named "${name}"`);
      }
      const body = await this.prepare(t, tenant, input, previous.body, trx, 'update', actor);
      await t.store.update(this.tenantOf(t, tenant), name, body, trx, actor.principal);
      // Read back: a store may keep fields it derives or keeps elsewhere (a team's managers, from its memberships).
      const stored: StoredObject = (await t.store.get(this.tenantOf(t, tenant), name, trx)) ?? { ...previous, body };
      const changed = changedFields(t, previous.body, stored.body);
      await this.committed(t, tenant, 'update', name, stored, changed, actor, trx);
      return this.view(t, stored);
    };
    return db ? run(db) : this.deps.knex.transaction(run);
  }

  async remove(type: string, tenant: string, name: string, actor: Actor): Promise<void> {
    const t = this.require(type);
    await this.deps.knex.transaction(async (trx) => {
      const stored = await t.store.get(this.tenantOf(t, tenant), name, trx);
      if (!stored) throw this.problem(t, 'unknown', `No ${t.decl.noun} is named "${name}"`);
      const refused = await t.decl.hooks?.beforeDelete?.(name, this.hookContext(tenant, trx));
      if (typeof refused === 'string' && refused.length > 0) throw this.problem(t, 'referenced', refused);
      const referrers = await this.referrers(type, tenant, name, trx);
      if (referrers.length > 0) {
        throw this.problem(t, 'referenced', `The ${t.decl.noun} "${name}" is used by ${referrers.join(', ')}`, { referrers });
      }
      await t.store.remove(this.tenantOf(t, tenant), name, trx);
      await this.committed(t, tenant, 'delete', name, null, [], actor, trx);
    });
  }

  /**
   * A change a collection's own route made (`routes: 'own'`, written by its own service): the event the
   * standard set writes for the same change (who, type, name, changed field names), and the change listeners.
   * `before`/`after` are the portable forms around the write (null for a create's before, a delete's after).
   */
  async recordChange(type: string, tenant: string, op: 'create' | 'update' | 'delete', name: string, before: ConfigObject | null, after: ConfigObject | null, actor: Actor): Promise<void> {
    const t = this.require(type);
    const changed = op === 'create' ? Object.keys(after ?? {}).filter((f) => f !== t.key).sort() : op === 'update' ? changedFields(t, before ?? {}, after ?? {}) : [];
    const codes = t.decl.events ?? { created: 'CONFIG-CREATED', updated: 'CONFIG-UPDATED', deleted: 'CONFIG-DELETED' };
    const code = op === 'create' ? codes.created : op === 'update' ? codes.updated : codes.deleted;
    await this.deps.events.append({ tenant, code, module: t.decl.events?.module ?? 'configuration', status: 'success', principal: actor.principal, objectType: t.decl.type, objectId: name, payload: { type: t.decl.type, name, changed } });
    for (const listener of this.listeners.get(t.decl.type) ?? []) listener(tenant);
  }

  /** Every object that names this one (`type/name`), in the registry and outside it. */
  async referrers(type: string, tenant: string, name: string, db: Db = this.deps.knex): Promise<string[]> {
    const found: string[] = [];
    for (const other of this.registered.values()) {
      const refs = (other.decl.references ?? []).filter((r) => r.type === type);
      if (refs.length === 0) continue;
      for (const object of await other.store.list(this.tenantOf(other, tenant), db)) {
        if (refs.some((r) => namesAt(object.body, r.field).includes(name))) found.push(`${other.decl.type}/${object.name}`);
      }
    }
    for (const source of this.referrerSources.get(type) ?? []) found.push(...(await source(tenant, name, db)));
    const t = this.require(type);
    if (t.decl.hooks?.referrers) found.push(...(await t.decl.hooks.referrers(name, this.hookContext(tenant, db))));
    return [...new Set(found)].sort();
  }

  private checkShape(t: RegisteredType, input: unknown): void {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw this.problem(t, 'invalid', `The ${t.decl.noun} must be a JSON object`);
    if (!t.validateInput(input)) throw this.problem(t, 'invalid', describeError(t.validateInput.errors?.[0]));
  }

  private nameOf(t: RegisteredType, input: unknown): string {
    const name = input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as ConfigObject)[t.key] : undefined;
    if (typeof name !== 'string' || name.length === 0) throw this.problem(t, 'invalid', `${t.key}: is required`);
    return name;
  }

  hookContext(tenant: string, db: Db = this.deps.knex, actor: Actor | null = null): ConfigHookContext {
    const holds = actor?.holdsUnfiltered;
    return {
      tenant,
      caller: actor && holds ? { identifier: actor.principal, holdsUnfiltered: (permission) => holds(permission) } : null,
      db,
      lookup: async (type, name) => {
        const other = this.registered.get(type);
        if (!other) return null;
        const stored = await other.store.get(this.tenantOf(other, tenant), name, db);
        return stored ? this.opened(other, stored) : null;
      },
    };
  }

  private aad(t: RegisteredType, path: string): string {
    return `config:${t.decl.type}:${path}`;
  }

  /**
   * Validates an input against the type and builds the body to store: `_id` dropped, secrets sealed (the
   * mask or a missing secret keeps the previous value, null clears it), references checked, the type's
   * own hook run.
   */
  private async prepare(t: RegisteredType, tenant: string, input: unknown, previous: ConfigObject | null, db: Db, op: 'create' | 'update', actor: Actor | null): Promise<ConfigObject> {
    this.checkShape(t, input);
    let body = cloneJson(input as ConfigObject);
    delete body._id;
    for (const field of t.decl.serverOwned ?? []) delete body[field];
    if (t.decl.unknownFields === 'ignore') for (const field of Object.keys(body)) if (!(field in t.decl.properties)) delete body[field];
    // `merge` types: what a PUT leaves out keeps its value (their PUT was always so).
    if (previous && t.decl.update === 'merge') {
      body = { ...cloneJson(previous), ...body };
      // Secrets keep theirs through the rules below, never by copying the sealed value as if sent.
      for (const path of t.secretsOf(body)) if (getPath(input as ConfigObject, path) === undefined) setPath(body, path, undefined);
    }
    if (t.decl.hooks?.normalize) body = t.decl.hooks.normalize(body, previous ? cloneJson(previous) : null);
    const name = body[t.key] as string;
    if (name.length > 191 || /[/\\\u0000-\u001f]/.test(name)) throw this.problem(t, 'invalid', `${t.key}: must be 1 to 191 characters, without "/", "\\" or control characters`);
    const inClear = t.store.secretsInClear === true;
    for (const path of t.secretsOf(body)) {
      const value = getPath(body, path);
      if (value === SECRET_MASK || value === undefined) {
        if (op === 'create' && value === SECRET_MASK) throw this.problem(t, 'invalid', `${path}: send the secret itself, not the mask`);
        setPath(body, path, previous ? getPath(previous, path) : undefined);
      } else if (value === null) {
        setPath(body, path, undefined);
      } else if (!inClear) {
        const plain = typeof value === 'string' ? value : JSON.stringify(value);
        const kept = previous ? getPath(previous, path) : undefined;
        // The same value sent again keeps its envelope: an unchanged secret is not a change.
        const same = typeof kept === 'string' && this.deps.secrets.openString(kept, this.aad(t, path)) === plain;
        setPath(body, path, same ? kept : this.deps.secrets.seal(plain, this.aad(t, path)));
      }
    }
    for (const field of t.decl.required ?? []) {
      if (t.secrets.includes(field) && getPath(body, field) == null) throw this.problem(t, 'invalid', `${field}: is required`);
    }
    for (const ref of t.decl.references ?? []) {
      const target = this.registered.get(ref.type);
      if (!target) continue;
      for (const referenced of namesAt(body, ref.field)) {
        if (!(await target.store.get(this.tenantOf(target, tenant), referenced, db))) {
          throw this.problem(t, 'invalid', `${ref.field}: no ${target.decl.noun} is named "${referenced}"`);
        }
      }
    }
    if (t.decl.hooks?.validate) {
      const opened = inClear ? cloneJson(body) : this.opened(t, { id: '', name, body, createdAt: 0, updatedAt: 0 });
      const message = await t.decl.hooks.validate(opened, { ...this.hookContext(tenant, db, actor), previous });
      if (typeof message === 'string' && message.length > 0) throw this.problem(t, 'invalid', message);
    }
    return body;
  }

  private async committed(t: RegisteredType, tenant: string, op: 'create' | 'update' | 'delete', name: string, stored: StoredObject | null, changed: string[], actor: Actor, trx?: Knex.Transaction): Promise<void> {
    const codes = t.decl.events ?? { created: 'CONFIG-CREATED', updated: 'CONFIG-UPDATED', deleted: 'CONFIG-DELETED' };
    const code = op === 'create' ? codes.created : op === 'update' ? codes.updated : codes.deleted;
    // A store that writes its collection's own events (events.byStore) has written this one.
    if (t.decl.events?.byStore !== true) {
      await this.deps.events.append(
        { tenant, code, module: t.decl.events?.module ?? 'configuration', status: 'success', principal: actor.principal, objectType: t.decl.type, objectId: name, payload: { type: t.decl.type, name, changed } },
        trx ? { trx } : {},
      );
    }
    const after = async (): Promise<void> => {
      for (const listener of this.listeners.get(t.decl.type) ?? []) listener(tenant);
      try {
        await t.decl.hooks?.afterChange?.({ op, name, object: stored ? this.opened(t, stored) : null }, this.hookContext(tenant));
      } catch (err) {
        this.deps.logger.error({ err, type: t.decl.type, name }, 'configuration afterChange hook failed');
      }
    };
    // Inside an import's transaction: run once it commits.
    if (trx) void trx.executionPromise.then(after, () => undefined);
    else await after();
  }
}

/** Names in a reference field: one string, or an array of strings. */
function namesIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** Names at a reference's dotted path, through the arrays of objects on the way (`parameters.recipients.team`). */
function namesAt(object: ConfigObject, path: string): string[] {
  const [head, ...rest] = path.split('.');
  const value = object[head!];
  if (rest.length === 0) return namesIn(value);
  const objects = (Array.isArray(value) ? value : [value]).filter((v): v is ConfigObject => v !== null && typeof v === 'object' && !Array.isArray(v));
  return objects.flatMap((o) => namesAt(o, rest.join('.')));
}

/** Top-level fields whose stored value differs (a re-sealed secret counts as changed only if its value did). */
function changedFields(t: RegisteredType, before: ConfigObject, after: ConfigObject): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...fields].filter((f) => f !== t.key && JSON.stringify(before[f]) !== JSON.stringify(after[f])).sort();
}

/** The first schema error, naming the field. */
function describeError(error: ErrorObject | undefined): string {
  if (!error) return 'is not valid';
  const at = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'required') return `${at ? `${at}.` : ''}${(error.params as { missingProperty: string }).missingProperty}: is required`;
  if (error.keyword === 'additionalProperties') return `${at ? `${at}.` : ''}${(error.params as { additionalProperty: string }).additionalProperty}: is not a known field`;
  return `${at || '(body)'}: ${error.message ?? 'is not valid'}`;
}
