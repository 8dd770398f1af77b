/**
 * Administration of the ACME server under /api/v1/acme/ (capability configuration, permissions
 * configuration:acme:read|write): accounts (list and filter, deactivate) and orders (list and filter, revoke
 * the certificate). EAB keys and policies are configuration types (eab-types.ts): the kernel serves them.
 * Pages are 1-based, as every list of the API.
 */
import type { EnrollmentFacade, RouteScope } from '@certwright/sdk';
import { iso } from './ids.js';
import type { Account, AcmeStore, Order } from './store.js';

const tags = ['ACME'];
const read = { access: { permission: 'configuration:acme:read' } };
const write = { access: { permission: 'configuration:acme:write' } };
const page = {
  page: { type: 'integer', minimum: 1, maximum: 100000, default: 1 },
  pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
};
const idParams = { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$' } } };
const text = { type: 'string', minLength: 1, maxLength: 191 };

const accountView = (a: Account) => ({ _id: a.id, profile: a.profile, status: a.status, contact: a.contact, termsOfServiceAgreed: a.termsAgreed, eabKid: a.eabKid, thumbprint: a.thumbprint, createdAt: a.createdAt });
const orderView = (o: Order & { certificateThumbprint?: string | null }) => ({
  _id: o.id,
  profile: o.profile,
  account: o.accountId,
  status: o.status,
  identifiers: o.identifiers,
  expires: iso(o.expiresAt),
  requestId: o.requestId,
  certificateThumbprint: o.certificateThumbprint ?? null,
  error: o.error,
  createdAt: o.createdAt,
});

interface Reply {
  code(n: number): Reply;
  type(t: string): Reply;
  send(b: unknown): unknown;
}
/** A problem+json answer of the platform's shape (`error` is the stable code). */
const problem = (reply: Reply, status: number, error: string, message: string): unknown =>
  reply.code(status).type('application/problem+json').send(JSON.stringify({ error, message, title: status === 404 ? 'Not Found' : 'Conflict', status }));

export function registerAdminRoutes(scope: RouteScope, deps: { store: AcmeStore; enrollment: EnrollmentFacade }): void {
  const { store, enrollment } = deps;
  const listing = async <T>(q: { page: number; pageSize: number }, fetch: (offset: number, limit: number) => Promise<T[]>) => {
    const rows = await fetch((q.page - 1) * q.pageSize, q.pageSize + 1);
    return { results: rows.slice(0, q.pageSize), page: q.page, pageSize: q.pageSize, hasMore: rows.length > q.pageSize };
  };

  scope.route({
    method: 'GET',
    url: '/api/v1/acme/accounts/',
    config: read,
    schema: {
      tags,
      summary: 'ACME accounts, newest first; filters: profile, status, eabKid, contact (part of an address)',
      querystring: { type: 'object', additionalProperties: false, properties: { ...page, profile: text, status: { type: 'string', enum: ['valid', 'deactivated', 'revoked'] }, eabKid: text, contact: text } },
    },
    handler: async (req: { query: { page: number; pageSize: number; profile?: string; status?: string; eabKid?: string; contact?: string } }) => {
      const out = await listing(req.query, (o, l) => store.listAccounts(req.query, o, l));
      return { ...out, results: out.results.map(accountView) };
    },
  });

  scope.route({
    method: 'POST',
    url: '/api/v1/acme/accounts/:id/deactivate',
    config: write,
    schema: { tags, summary: 'Deactivate an ACME account: its requests are refused from now on (RFC 8555 §7.3.6)', params: idParams },
    handler: async (req: { params: { id: string } }, reply: Reply) => {
      const account = await store.accountById(req.params.id);
      if (!account) return problem(reply, 404, 'ACME-ADMIN-003', `No ACME account ${req.params.id}`);
      await store.updateAccount(account.id, { status: 'deactivated' });
      return accountView({ ...account, status: 'deactivated' });
    },
  });

  scope.route({
    method: 'GET',
    url: '/api/v1/acme/orders/',
    config: read,
    schema: {
      tags,
      summary: 'ACME orders, newest first; filters: profile, account, status, identifier (a name or address)',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { ...page, profile: text, account: text, status: { type: 'string', enum: ['pending', 'ready', 'processing', 'valid', 'invalid'] }, identifier: text },
      },
    },
    handler: async (req: { query: { page: number; pageSize: number; profile?: string; account?: string; status?: string; identifier?: string } }) => {
      const out = await listing(req.query, (o, l) => store.listOrders(req.query, o, l));
      return { ...out, results: out.results.map(orderView) };
    },
  });

  scope.route({
    method: 'POST',
    url: '/api/v1/acme/renewal-info/advance',
    config: write,
    schema: {
      tags,
      summary: 'Early renewal (ARI, RFC 9773): certificates of a profile (or of one order) issued before a date are suggested to renew from `at`',
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          profile: text,
          order: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$' },
          issuedBefore: { type: 'integer', minimum: 0, description: 'Epoch ms; default now' },
          at: { type: 'integer', minimum: 0, description: 'Epoch ms the renewal window starts at; default now' },
        },
      },
    },
    handler: async (req: { body: { profile?: string; order?: string; issuedBefore?: number; at?: number } }, reply: Reply) => {
      const b = req.body;
      if (!b.profile && !b.order) return problem(reply, 400, 'ACME-ADMIN-002', 'Name a profile or an order');
      const now = Date.now();
      const updated = await store.advanceRenewal('default', { profile: b.profile, order: b.order, issuedBefore: b.issuedBefore ?? now }, b.at ?? now);
      return { updated };
    },
  });

  scope.route({
    method: 'POST',
    url: '/api/v1/acme/orders/:id/revoke',
    config: write,
    schema: {
      tags,
      summary: "Revoke the certificate of a valid ACME order (through the request workflow, as the caller)",
      params: idParams,
      body: { type: 'object', additionalProperties: false, properties: { reason: { type: 'string', enum: ['unspecified', 'keyCompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation'] } } },
    },
    handler: async (req: { params: { id: string }; body?: { reason?: string }; principal?: { identifier: string } }, reply: Reply) => {
      const order = await store.orderById(req.params.id);
      if (!order) return problem(reply, 404, 'ACME-ADMIN-003', `No ACME order ${req.params.id}`);
      if (order.status !== 'valid' || !order.certificatePem) return problem(reply, 409, 'ACME-ADMIN-006', 'The order has no certificate');
      const leaf = order.certificatePem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0];
      const outcome = await enrollment.revoke({ protocol: 'acme', certificatePem: leaf, requester: req.principal?.identifier ?? 'administrator', reason: req.body?.reason ?? 'unspecified' });
      if ('refused' in outcome) return problem(reply, 409, outcome.code, outcome.message);
      return { order: orderView(order), request: outcome };
    },
  });
}
