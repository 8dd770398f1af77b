import type { FastifyInstance, FastifyReply } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { fromBase64, pemBlocks } from '../input.js';
import { parseCertificatePem } from '../x509/parse.js';
import type { CoreServices } from '../../services.js';
import type { ActiveConnector, ConnectorInstances } from './instances.js';
import { revocationSource } from './revocation.js';
import { nameSchema } from './schemas.js';
import type { RevocationSource } from '@certwright/sdk';

/** How long a connector's CRL is served from memory (a revocation through the gateway drops it at once). */
export const CRL_CACHE_MS = 60_000;
const BODY_LIMIT = 64 * 1024;
const tags = ['pki-publication'];
const binary = (description: string) => ({ type: 'string', format: 'binary', description }) as const;
const connectorParams = { type: 'object', required: ['connector'], properties: { connector: nameSchema } } as const;

export interface PublicationOptions {
  services: CoreServices;
  instances: ConnectorInstances;
  caChain(tenant: string, name: string): Promise<string[]>;
}

/** CRLs of connectors, per node: dropped after CRL_CACHE_MS, on a new connector version, or by `invalidate`. */
export class CrlCache {
  private readonly entries = new Map<string, { version: number; at: number; der: Promise<Uint8Array> }>();
  constructor(private readonly clock: () => number) {}
  invalidate(tenant: string, connector: string): void {
    this.entries.delete(`${tenant}\u0000${connector}`);
  }
  async get(tenant: string, connector: string, version: number, make: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const key = `${tenant}\u0000${connector}`;
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.version === version && now - hit.at < CRL_CACHE_MS) return hit.der;
    const der = make();
    const entry = { version, at: now, der };
    this.entries.set(key, entry);
    try {
      return await der;
    } catch (err) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw err;
    }
  }
}

const failed = (connector: string, what: string, err: unknown): ProblemError =>
  err instanceof ProblemError ? err : new ProblemError('PKI-CONN-007', { detail: `${what} of "${connector}": ${(err as Error).message ?? String(err)}` });

/**
 * Where Certwright publishes what connectors sign (capability webra, public): GET /pki/:connector/crl (DER),
 * GET /pki/:connector/ca (DER of the issuing CA), POST /pki/:connector/ocsp and GET /pki/:connector/ocsp/<base64>
 * (RFC 6960 A.1). CRL and OCSP answers come from the connector's `crl` / `ocsp` over the inventory's view of
 * what its issuing CA signed; 404 for an unknown connector or one that does not sign them.
 */
export async function publicationRoutes(app: FastifyInstance, options: PublicationOptions & { crls: CrlCache; onCrlSource?: (crlOf: (tenant: string, connector: string) => Promise<Uint8Array | null>) => void }): Promise<void> {
  const { services, instances, crls } = options;
  app.addContentTypeParser('application/ocsp-request', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));

  const issuingCa = async (tenant: string, connector: string): Promise<string> => {
    let chain: string[];
    try {
      chain = await options.caChain(tenant, connector);
    } catch (err) {
      throw failed(connector, 'the CA chain', err);
    }
    if (!chain[0]) throw new ProblemError('PKI-CONN-007', { detail: `the PKI connector "${connector}" has no CA chain` });
    return chain[0];
  };
  const sourceOf = async (tenant: string, connector: string): Promise<RevocationSource> =>
    revocationSource(services.knex, tenant, parseCertificatePem(await issuingCa(tenant, connector)).dn, services.clock);
  const noMethod = (connector: string, what: string): ProblemError =>
    new ProblemError('PKI-CONN-003', { message: `The PKI connector "${connector}" does not publish ${what}` });

  const answerOcsp = async (tenant: string, connector: string, request: Uint8Array, reply: FastifyReply): Promise<FastifyReply> => {
    const active: ActiveConnector = await instances.resolve(tenant, connector);
    const ocsp = active.connector.ocsp?.bind(active.connector);
    if (!ocsp) throw noMethod(connector, 'OCSP');
    let der: Uint8Array;
    try {
      der = await ocsp(request, await sourceOf(tenant, connector));
    } catch (err) {
      throw failed(connector, 'the OCSP response', err);
    }
    return reply.type('application/ocsp-response').header('cache-control', 'no-cache').send(Buffer.from(der));
  };

  type P = { Params: { connector: string } };

  /** The connector's current CRL through the cache; null when the connector signs none. */
  const crlOf = async (tenant: string, connector: string): Promise<Uint8Array | null> => {
    const active = await instances.resolve(tenant, connector);
    const crl = active.connector.crl?.bind(active.connector);
    if (!crl) return null;
    try {
      return await crls.get(tenant, connector, active.record.version, async () => crl(await sourceOf(tenant, connector)));
    } catch (err) {
      throw failed(connector, 'the CRL', err);
    }
  };
  options.onCrlSource?.(crlOf);

  app.get<P>('/pki/:connector/crl', {
    config: { capability: 'webra', access: 'public' },
    schema: { tags, summary: "The connector's current CRL (DER, application/pkix-crl)", params: connectorParams, response: { 200: binary('DER CRL') } },
    handler: async (request, reply) => {
      const { connector } = request.params;
      const der = await crlOf(request.tenant, connector);
      if (!der) throw noMethod(connector, 'a CRL');
      return reply.type('application/pkix-crl').send(Buffer.from(der));
    },
  });

  app.get<P>('/pki/:connector/ca', {
    config: { capability: 'webra', access: 'public' },
    schema: { tags, summary: "The connector's issuing CA certificate (DER, application/pkix-cert)", params: connectorParams, response: { 200: binary('DER certificate') } },
    handler: async (request, reply) => {
      const pem = await issuingCa(request.tenant, request.params.connector);
      const der = pemBlocks(pem)[0]?.der;
      if (!der) throw new ProblemError('PKI-CONN-007', { detail: 'the issuing CA certificate is not PEM' });
      return reply.type('application/pkix-cert').send(Buffer.from(der));
    },
  });

  app.post<P & { Body: Buffer }>('/pki/:connector/ocsp', {
    config: { capability: 'webra', access: 'public' },
    schema: { tags, summary: 'OCSP (RFC 6960), POST: application/ocsp-request → application/ocsp-response', params: connectorParams, response: { 200: binary('DER OCSP response') } },
    handler: async (request, reply) => {
      if (!Buffer.isBuffer(request.body)) throw new ProblemError('HTTP-004', { detail: 'send the DER OCSP request as application/ocsp-request' });
      return answerOcsp(request.tenant, request.params.connector, new Uint8Array(request.body), reply);
    },
  });

  app.get<{ Params: { connector: string; '*': string } }>('/pki/:connector/ocsp/*', {
    config: { capability: 'webra', access: 'public' },
    schema: {
      tags,
      summary: 'OCSP (RFC 6960 A.1), GET: the base64 DER request (URL-encoded) after /ocsp/',
      params: { type: 'object', required: ['connector'], properties: { connector: nameSchema, '*': { type: 'string' } } },
      response: { 200: binary('DER OCSP response') },
    },
    handler: async (request, reply) => {
      let text: string;
      try {
        text = decodeURIComponent(request.params['*'] ?? '');
      } catch {
        throw new ProblemError('HTTP-002', { detail: 'the OCSP request is not URL-encoded base64' });
      }
      const der = fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'));
      if (!der || der.length === 0) throw new ProblemError('HTTP-002', { detail: 'the OCSP request is not URL-encoded base64' });
      return answerOcsp(request.tenant, request.params.connector, der, reply);
    },
  });
}
