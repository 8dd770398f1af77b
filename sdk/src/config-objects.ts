/**
 * A configuration object type, declared once: the kernel derives its routes (the standard set), problems,
 * events, secret handling, permission checks, export/import and cookbook section from it. Core declares
 * its own collections this way; a plugin declares its own types through its registries
 * (`registries.configTypes.declare(...)`).
 */

/** A JSON Schema object (draft 07, as ajv reads it). */
export type JsonSchema = Record<string, unknown>;

/** An object as a client sends and reads it: its key field (`name`) and the type's fields. */
export type ConfigObject = Record<string, unknown>;

export interface ConfigReference {
  /**
   * Dotted path of the field holding the referenced object's name (or an array of names when `many`); arrays of
   * objects on the way are looked through (`parameters.recipients.team`: the team of every recipient).
   */
  field: string;
  /** The referenced configuration type (its `type`). */
  type: string;
  many?: boolean;
}

/** Who makes a change, as hooks may check it. */
export interface ConfigCaller {
  identifier: string;
  /** Whether the caller holds `permission` with no filter (over every object it covers). */
  holdsUnfiltered(permission: string): boolean;
}

export interface ConfigHookContext {
  tenant: string;
  /**
   * Who makes the change (an API or import caller); null for the platform itself (first-start defaults, a
   * CLI import by the host's operator) and outside writes (deletes' referrers, afterChange).
   */
  caller: ConfigCaller | null;
  /** The registry's database handle: the transaction of the write in progress (queries must use it, not another connection). */
  db: unknown;
  /** The stored object of another type, secrets open (null when absent): for cross-checks in hooks. */
  lookup(type: string, name: string): Promise<ConfigObject | null>;
}

/** An object as a store keeps it: the body holds sealed secrets (the registry seals and opens them). */
export interface StoredConfigObject {
  id: string;
  name: string;
  body: ConfigObject;
  createdAt: number;
  updatedAt: number;
}

/**
 * Where a type's objects live when not in the registry's own table: a collection that keeps its tables
 * (and their readers elsewhere in the platform). `db` is the registry's database handle or transaction.
 */
export interface ConfigTypeStore {
  // `by`: the principal making the change (null: the platform itself), for stores that record who wrote a row.
  list(tenant: string, db: unknown): Promise<StoredConfigObject[]>;
  get(tenant: string, name: string, db: unknown): Promise<StoredConfigObject | null>;
  /** null when the name is taken. */
  insert(tenant: string, name: string, body: ConfigObject, db: unknown, by?: string | null): Promise<StoredConfigObject | null>;
  /** The registry reads the object back (get) after an update: what it answers and its event's `changed`. */
  update(tenant: string, name: string, body: ConfigObject, db: unknown, by?: string | null): Promise<boolean>;
  remove(tenant: string, name: string, db: unknown): Promise<boolean>;
  /**
   * true: the store seals and opens secrets itself (a collection whose tables already held them sealed):
   * bodies it returns carry them open, and it is handed them open. The registry still masks them in every
   * answer and seals or leaves them out of exports.
   */
  secretsInClear?: boolean;
}

export interface ConfigHooks {
  /**
   * The object to store, from a valid input: fill in or normalise fields (`previous` is the stored
   * object on an update, null on a create).
   */
  normalize?(object: ConfigObject, previous: ConfigObject | null): ConfigObject;
  /** Why this object may not be deleted (answered as the type's `-005`), or nothing. */
  beforeDelete?(name: string, context: ConfigHookContext): Promise<string | void> | string | void;
  /**
   * More checks than the schema can express. Answer a message naming the field (`"port: must be …"`) to
   * refuse the object with the type's validation problem; nothing to accept it.
   */
  validate?(object: ConfigObject, context: ConfigHookContext & { previous: ConfigObject | null }): Promise<string | void> | string | void;
  /** Referrers the registry cannot see (objects outside it that name this one), as `type/name` labels. */
  referrers?(name: string, context: ConfigHookContext): Promise<string[]> | string[];
  /**
   * Secret fields that depend on the object (a connector's settings, whose secrets its plugin's schema
   * names), as dotted paths, beside the type's static `secrets`.
   */
  secretsOf?(object: ConfigObject): string[];
  /** After a committed create, update or delete (the running state follows the stored one here). */
  afterChange?(change: { op: 'create' | 'update' | 'delete'; name: string; object: ConfigObject | null }, context: ConfigHookContext): Promise<void> | void;
}

export interface ConfigObjectType {
  /** Stable identifier (`http-proxy`): export documents, events and references use it. */
  type: string;
  /** Plural title for documentation (`HTTP proxies`). */
  title: string;
  description?: string;
  /** Collection route, ending in `/` (`/api/v1/proxy/httpproxies/`). */
  basePath: string;
  /** OpenAPI tag. */
  tag: string;
  /** Permission section: `configuration:<section>:read|write`. */
  section: string;
  /** Problem code family: `<family>-002` invalid, `-003` unknown, `-004` name taken, `-005` referenced. */
  errorFamily: string;
  /** Singular noun for messages (`HTTP proxy`). */
  noun: string;
  /** Its key in export documents' `items` (Horizon's HorizonExportItems: `proxies`, `labels`…). */
  exportKey: string;
  /** `tenant`: each tenant has its own objects (default); `global`: one set for the instance. */
  scope?: 'tenant' | 'global';
  /** The key field (default `name`). */
  key?: string;
  /** Input fields (JSON Schema properties of the object, the key included), and which are required. */
  properties: Record<string, JsonSchema>;
  required?: readonly string[];
  /**
   * Fields the server owns that a client may echo back from a GET besides `_id` (`createdAt`, `updatedAt`):
   * accepted on input and dropped, never stored (not to be listed in `properties`).
   */
  serverOwned?: readonly string[];
  /** Dotted paths of secret fields: sealed at rest, answered `********`, never exported in clear. */
  secrets?: readonly string[];
  references?: readonly ConfigReference[];
  hooks?: ConfigHooks;
  /** Objects created on first start of a tenant (e.g. the system configuration entries). */
  defaults?: readonly ConfigObject[];
  /** false: no DELETE route (objects that only exist once per key, such as system configuration entries). */
  deletable?: boolean;
  /** false: no POST route (PUT upserts instead). */
  creatable?: boolean;
  /** `replace` (default): a PUT replaces the object; `merge`: fields a PUT leaves out keep their value. */
  update?: 'replace' | 'merge';
  /**
   * `standard` (default): the registry serves the standard set at `basePath`. `own`: the collection keeps
   * the routes it had (a wire shape the standard set cannot give, said in its route file) and takes part in
   * everything else: export/import, the cookbook, reference checks and the referrers of a delete.
   */
  routes?: 'standard' | 'own';
  /** `refuse` (default): an unknown field is invalid input (-002); `ignore`: dropped (clients that always sent extra fields). */
  unknownFields?: 'refuse' | 'ignore';
  /** Its own store (a collection that keeps its tables); default: the registry's table. */
  store?: ConfigTypeStore;
  /** Event codes of its changes, when the type had its own before the registry (default CONFIG-*). */
  events?: {
    module: string;
    created: string;
    updated: string;
    deleted: string;
    /**
     * true: the store's insert, update and remove write these events themselves, in the write's transaction,
     * with the payload the codes always carried (the registry writes none, so an import's events are the
     * routes' events).
     */
    byStore?: boolean;
  };
}

export interface ConfigTypeRegistry {
  declare(type: ConfigObjectType): void;
}
