// The floor of `npm run bench -- enroll`: the least a durable enrollment over HTTP costs on this machine, as a
// server process the benchmark measures with the same load generator, CSRs and checks as the kernel. It is not
// Certwright and serves nothing else: it is what any enrollment server written in Node pays at the least.
//
// What it does per POST /api/v1/requests/submit, on one thread:
//   - the API key compared (the kernel verifies it once with argon2, then caches: a compare is what is left);
//   - the JSON body parsed by fastify, the CSR PEM decoded, and the same toolkit call as the peer
//     (CertificateIssuer.issue: CSR signature checked, certificate built and signed with the local CA's template);
//   - the durable writes the benchmark checks, into the kernel's own tables (its migrations, its indexes): the
//     request (completed, with its certificate id), the inventory certificate, its document and its SAN, and three
//     hash-chained events (submitted, issued, completed), all committed before the answer, one commit for all the
//     enrollments waiting (SQLite: one transaction, a prepared statement per row, WAL checkpoints on the kernel's
//     worker thread; MariaDB: one round trip a group, one multi-row INSERT a table);
//   - an answer with the request's id and status and the certificate (its id and PEM).
// What it leaves out, all of which the kernel must do: profile and template checks, permissions, the PKI queue
// item committed before the connector is called, the local CA's record of the serial, a parse of the certificate
// for the inventory's facts (here they are known from the issuance), labels and metadata, canonical JSON for the
// event chain, the client-compat request and certificate objects in the answer, triggers.
//
// Environment: PORT; FLOOR_DATABASE_URL (mysql://…) or FLOOR_DATA_DIR (SQLite file certwright.db there);
// FLOOR_API_KEY. Prints "listening" once it answers.
import type { Knex } from 'knex';
import Fastify from 'fastify';
import mysql from 'mysql2/promise';
import { createHash, generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import pino from 'pino';
import { openDatabase } from '../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../core/db/migrator.js';
import { checkpointOffThread } from '../../core/db/wal-checkpointer.js';
import { decodeInput, toPem } from '../../core/pki/input.js';
import { whole } from '../../core/pki/der/reader.js';
import { CertificateIssuer } from '../../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';
import { readCertificate } from '../../core/pki/x509/structure.js';
import { LEAF_TEMPLATE } from './leaf-template.js';

const TENANT = 'default';
const CA_DN = 'CN=Bench Floor Issuing CA,O=Certwright';
const EVENT_CODES = ['REQUEST-SUBMITTED', 'CERTIFICATE-ISSUED', 'REQUEST-COMPLETED'] as const;

interface Body {
  module?: string;
  workflow?: string;
  profile?: string;
  template?: { csr?: string; subject?: { element: string; value: string }[] };
}

type Row = Record<string, string | number | null>;
/** One enrollment's rows, by table. */
interface Rows {
  requests: Row;
  inv_certificates: Row;
  inv_certificate_documents: Row;
  inv_certificate_sans: Row;
  events: Row[];
}

/** Commits groups of enrollments: everything queued while the previous commit ran goes in the next. */
interface Writer {
  write(rows: Rows): Promise<void>;
  close(): Promise<void>;
}

const sha256 = (text: string | Uint8Array): string => createHash('sha256').update(text).digest('hex');
const newId = (): string => randomBytes(12).toString('hex');

/** The hash chain of events (one writer: this process), continued from the head the migrations wrote. */
class Chain {
  constructor(
    private seq: number,
    private hash: string,
  ) {}
  next(row: Row): Row {
    this.seq += 1;
    const prev = this.hash;
    this.hash = sha256(`${prev}${JSON.stringify(row)}`);
    return { ...row, seq: this.seq, prev_hash: prev, hash: this.hash };
  }
}

/** The chain head a group leaves: its last event (a later group's events are not committed with it). */
const headOf = (group: { rows: Rows }[]): [number, string] => {
  const last = group[group.length - 1]!.rows.events.at(-1)!;
  return [last.seq as number, last.hash as string];
};

const TABLES = ['requests', 'inv_certificates', 'inv_certificate_documents', 'inv_certificate_sans'] as const;

// The two writers below write their SQL by hand instead of going through core/db/statements.ts in a knex
// transaction, on purpose: a floor has to be the least the writes cost. Measured through the kernel's statements
// (a knex transaction a group, a round trip a statement) the MariaDB floor fell from about 1,060-1,180 to 697
// enrollments/s (main thread 0.65-0.74 to 0.97 ms), the SQLite one from about 920-940 to 856.

async function sqliteWriter(knex: Knex, filename: string): Promise<Writer> {
  const logger = pino({ level: 'warn' });
  const checkpointer = await checkpointOffThread(knex, filename, logger);
  // The pool's one connection, held from now on (knex is not used again): better-sqlite3 directly.
  const conn = (await knex.client.acquireConnection()) as import('better-sqlite3').Database;
  const statements = new Map<string, import('better-sqlite3').Statement>();
  const insert = (table: string, row: Row): void => {
    const columns = Object.keys(row);
    const key = `${table}(${columns.join(',')})`;
    let st = statements.get(key);
    if (!st) {
      st = conn.prepare(`insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`);
      statements.set(key, st);
    }
    st.run(...Object.values(row));
  };
  const begin = conn.prepare('BEGIN');
  const commit = conn.prepare('COMMIT');
  const head = conn.prepare('update "event_chain" set "seq" = ?, "hash" = ? where "id" = 1');
  let queued: { rows: Rows; done: () => void; failed: (err: Error) => void }[] = [];
  const flush = (): void => {
    const group = queued;
    queued = [];
    try {
      begin.run();
      for (const { rows } of group) {
        for (const table of TABLES) insert(table, rows[table]);
        for (const e of rows.events) insert('events', e);
      }
      head.run(...headOf(group));
      commit.run();
      for (const g of group) g.done();
    } catch (err) {
      if (conn.inTransaction) conn.exec('ROLLBACK');
      for (const g of group) g.failed(err as Error);
    }
  };
  return {
    write: (rows) =>
      new Promise((done, failed) => {
        if (queued.push({ rows, done, failed }) === 1) setImmediate(flush);
      }),
    close: async () => {
      await checkpointer?.stop();
      await knex.client.releaseConnection(conn);
      await knex.destroy();
    },
  };
}

async function mariadbWriter(url: string): Promise<Writer> {
  const conn = await mysql.createConnection({ uri: url, multipleStatements: true });
  let queued: { rows: Rows; done: () => void; failed: (err: Error) => void }[] = [];
  let running = false;
  const values = (rows: Row[]): { sql: string; params: unknown[] } => {
    const columns = Object.keys(rows[0]!);
    return {
      sql: `(${columns.map((c) => `\`${c}\``).join(', ')}) values ${rows.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ')}`,
      params: rows.flatMap((r) => columns.map((c) => r[c])),
    };
  };
  const flush = async (): Promise<void> => {
    if (running || queued.length === 0) return;
    running = true;
    const group = queued;
    queued = [];
    const parts = [...TABLES.map((t) => ({ table: t, ...values(group.map((g) => g.rows[t])) })), { table: 'events', ...values(group.flatMap((g) => g.rows.events)) }];
    const sql = ['BEGIN', ...parts.map((p) => `insert into \`${p.table}\` ${p.sql}`), 'update `event_chain` set `seq` = ?, `hash` = ? where `id` = 1', 'COMMIT'].join('; ');
    try {
      await conn.query(sql, [...parts.flatMap((p) => p.params), ...headOf(group)]);
      for (const g of group) g.done();
    } catch (err) {
      await conn.query('ROLLBACK').catch(() => undefined);
      for (const g of group) g.failed(err as Error);
    }
    running = false;
    void flush();
  };
  return {
    write: (rows) =>
      new Promise((done, failed) => {
        queued.push({ rows, done, failed });
        void flush();
      }),
    close: () => conn.end(),
  };
}

async function main(): Promise<void> {
  const url = process.env.FLOOR_DATABASE_URL ?? null;
  const dataDir = process.env.FLOOR_DATA_DIR ?? '';
  const apiKey = Buffer.from(process.env.FLOOR_API_KEY ?? '');
  if (!url && !dataDir) throw new Error('FLOOR_DATABASE_URL or FLOOR_DATA_DIR is required');
  if (apiKey.length === 0) throw new Error('FLOOR_API_KEY is required');

  const db = openDatabase({ url, dataDir, pool: { min: 0, max: 1 } });
  await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  const start = (await db.knex('event_chain').where({ id: 1 }).first('seq', 'hash')) as { seq: number | string; hash: string } | undefined;
  if (!start) throw new Error('event_chain has no head row');
  const chain = new Chain(Number(start.seq), start.hash);
  let writer: Writer;
  if (url) {
    await db.knex.destroy();
    writer = await mariadbWriter(url);
  } else writer = await sqliteWriter(db.knex, db.filename!);

  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const issuer = new CertificateIssuer({ caCertificateDer: selfSignedCertificate(ca.privateKey, { subject: CA_DN, basicConstraints: { ca: true } }), caKey: ca.privateKey });
  const issuerKey = sha256(CA_DN.toLowerCase());

  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.post('/api/v1/requests/submit', async (req, reply) => {
    const key = Buffer.from(String(req.headers['x-api-key'] ?? ''));
    if (key.length !== apiKey.length || !timingSafeEqual(key, apiKey)) return reply.code(401).send({ error: 'unauthorized' });
    const body = req.body as Body;
    const cn = body.template?.subject?.find((s) => s.element === 'cn.1')?.value;
    if (!body.template?.csr || !cn) return reply.code(400).send({ error: 'template.csr and cn.1 are required' });
    const der = issuer.issue(decodeInput(body.template.csr).der, LEAF_TEMPLATE);
    const structure = readCertificate(der);
    const pem = toPem(der);
    const now = Date.now();
    const requestId = newId();
    const certificateId = newId();
    const dn = `CN=${cn}`;
    const template = JSON.stringify(body.template);
    const event = (code: string, objectType: string, objectId: string): Row =>
      chain.next({ id: newId(), tenant: TENANT, code, module: 'webra', status: 'success', principal: 'administrator', object_type: objectType, object_id: objectId, payload: JSON.stringify({ requestId, profile: body.profile, certificateId }), created_at: now });
    await writer.write({
      requests: { id: requestId, tenant: TENANT, module: body.module ?? 'webra', workflow: body.workflow ?? 'enroll', status: 'completed', profile: body.profile ?? null, requester: 'administrator', approver: 'administrator', registration_date: now, last_modification_date: now, certificate_id: certificateId, holder_id: cn, template, requested_x509_data: template },
      inv_certificates: {
        id: certificateId,
        tenant: TENANT,
        module: 'webra',
        profile: body.profile ?? null,
        thumbprint: createHash('sha1').update(der).digest('hex'),
        public_key_thumbprint: sha256(whole(der, structure.spki)),
        self_signed: 0,
        dn,
        dn_key: sha256(dn.toLowerCase()),
        serial: Buffer.from(der.subarray(structure.serial.valueStart, structure.serial.end)).toString('hex'),
        issuer: CA_DN,
        issuer_key: issuerKey,
        not_before: structure.notBefore,
        not_after: structure.notAfter,
        key_type: 'EC-P256',
        signing_algorithm: 'SHA256WITHECDSA',
        holder_id: cn,
        created_at: now,
        updated_at: now,
      },
      inv_certificate_documents: { certificate_id: certificateId, tenant: TENANT, pem },
      inv_certificate_sans: { certificate_id: certificateId, tenant: TENANT, san_type: 'DNSNAME', value: cn, value_lc: cn.toLowerCase(), value_rev: [...cn.toLowerCase()].reverse().join(''), position: 0 },
      events: EVENT_CODES.map((code) => (code === 'CERTIFICATE-ISSUED' ? event(code, 'certificate', certificateId) : event(code, 'request', requestId))),
    });
    return { _id: requestId, module: body.module, workflow: body.workflow, status: 'completed', profile: body.profile, holderId: cn, registrationDate: now, certificateId, certificate: { _id: certificateId, certificate: pem } };
  });
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  process.stdout.write('listening\n');
  const stop = (): void => {
    void app
      .close()
      .then(() => writer.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`enroll floor server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
