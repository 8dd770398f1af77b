import { Ajv, type ErrorObject } from 'ajv';
import type { Knex } from 'knex';
import { isId, newId } from '../db/ids.js';
import { ProblemError } from '../errors/index.js';
import { DISCOVERY_EVENT_STATUSES, type DiscoveryEventInput, type DiscoveryEventOrigin, type DiscoveryEventStatus, type StoredDiscoveryEvent } from './types.js';

/** Optional text of at most `max` characters (the column sizes of migration 0009). */
const text = (max: number) => ({ type: ['string', 'null'], maxLength: max });

/** One event of the feed's PUT. Unknown keys are allowed and ignored (client-compat §9.3). */
const EVENT_SCHEMA = {
  type: 'object',
  required: ['campaign', 'code', 'status'],
  properties: {
    campaign: { type: 'string', minLength: 1, maxLength: 191 },
    sessionId: text(128),
    code: { type: 'string', minLength: 1, maxLength: 64 },
    status: { type: 'string', enum: [...DISCOVERY_EVENT_STATUSES] },
    errorCode: text(128),
    // TEXT holds 65,535 bytes on MySQL: 4,096 characters of 4 bytes fit.
    errorMessage: text(4096),
    hostname: text(255),
    ip: text(64),
    port: { type: ['integer', 'null'], minimum: 0, maximum: 65535 },
    source: text(255),
  },
};

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const validateEvent = ajv.compile<DiscoveryEventInput>(EVENT_SCHEMA);

/** Rows per INSERT: 17 columns × 250 stays far below SQLite's bound parameters and MySQL's packet size. */
const CHUNK = 250;

interface DiscoveryEventRow {
  id: string;
  tenant: string;
  campaign: string;
  session_id: string | null;
  code: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  hostname: string | null;
  ip: string | null;
  port: number | string | null;
  source: string | null;
  created_at: number | string;
  client_version: string | null;
  client_ip: string | null;
  client_id: string | null;
  certificate_id: string | null;
}

export const discoveryEventFromRow = (r: DiscoveryEventRow): StoredDiscoveryEvent => ({
  _id: r.id,
  campaign: r.campaign,
  sessionId: r.session_id,
  code: r.code,
  status: r.status as DiscoveryEventStatus,
  errorCode: r.error_code,
  errorMessage: r.error_message,
  hostname: r.hostname,
  ip: r.ip,
  port: r.port === null ? null : Number(r.port),
  source: r.source,
  timestamp: Number(r.created_at),
  clientVersion: r.client_version,
  clientIp: r.client_ip,
  clientId: r.client_id,
  certificateId: r.certificate_id,
});

function invalid(error: ErrorObject, index: number | undefined): ProblemError {
  const missing = error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : '';
  const path = `${error.instancePath}${missing}`.slice(1).replace(/\//g, '.');
  const where = [index === undefined ? '' : `event ${index}`, path].filter(Boolean).join(': ');
  const reason = missing ? 'is required' : (error.message ?? 'is invalid');
  return new ProblemError('DSC-002', { message: `${where || 'event'} ${reason}`, extra: index === undefined ? undefined : { index } });
}

/** Server-side text (a User-Agent, a principal) cut to its column rather than refused. */
const cut = (value: string | null | undefined, max: number): string | null => (value == null ? null : value.slice(0, max));

/**
 * Discovery events of the feed (client-compat §5). Unlike EventStore, no hash chain: clients report
 * them in batches of thousands, so a batch is plain multi-row inserts in one transaction.
 */
export class DiscoveryEventStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number = Date.now,
  ) {}

  /** One event or an array of them (the PUT accepts both); all or none is written. */
  async append(tenant: string, events: DiscoveryEventInput | readonly DiscoveryEventInput[], origin: DiscoveryEventOrigin = {}): Promise<StoredDiscoveryEvent[]> {
    const list: readonly unknown[] = Array.isArray(events) ? events : [events];
    list.forEach((event, i) => {
      if (!validateEvent(event)) throw invalid(validateEvent.errors![0]!, Array.isArray(events) ? i : undefined);
    });
    if (origin.certificateId != null && !isId(origin.certificateId)) throw new TypeError(`certificateId ${JSON.stringify(origin.certificateId)} is not an id`);
    const createdAt = this.clock();
    const rows: DiscoveryEventRow[] = (list as DiscoveryEventInput[]).map((e) => ({
      id: newId(createdAt),
      tenant,
      campaign: e.campaign,
      session_id: e.sessionId ?? null,
      code: e.code,
      status: e.status,
      error_code: e.errorCode ?? null,
      error_message: e.errorMessage ?? null,
      hostname: e.hostname ?? null,
      ip: e.ip ?? null,
      port: e.port ?? null,
      source: e.source ?? null,
      created_at: createdAt,
      client_version: cut(origin.clientVersion, 255),
      client_ip: cut(origin.clientIp, 64),
      client_id: cut(origin.clientId, 255),
      certificate_id: origin.certificateId?.toLowerCase() ?? null,
    }));
    await this.knex.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += CHUNK) await trx('discovery_events').insert(rows.slice(i, i + CHUNK));
    });
    return rows.map(discoveryEventFromRow);
  }

  async get(tenant: string, id: string): Promise<StoredDiscoveryEvent | undefined> {
    if (!isId(id)) return undefined;
    const row = (await this.knex('discovery_events').where({ tenant, id: id.toLowerCase() }).first()) as DiscoveryEventRow | undefined;
    return row ? discoveryEventFromRow(row) : undefined;
  }
}
