/**
 * A minimal ACME client for tests that need requests no packaged client sends (error paths, hand-made
 * headers): flattened JWS with jose, nonces from new-nonce, answers through fastify's inject.
 */
import { calculateJwkThumbprint, exportJWK, FlattenedSign, generateKeyPair, type JWK } from 'jose';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import type { FastifyInstance } from 'fastify';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: Record<string, any>;
}

export class JwsClient {
  kid?: string;
  private constructor(
    readonly app: FastifyInstance,
    readonly base: string,
    readonly privateKey: KeyLike,
    readonly jwk: JWK,
    readonly alg: string,
  ) {}

  static async create(app: FastifyInstance, base: string, alg = 'ES256'): Promise<JwsClient> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    return new JwsClient(app, base, privateKey, await exportJWK(publicKey), alg);
  }

  thumbprint(): Promise<string> {
    return calculateJwkThumbprint(this.jwk, 'sha256');
  }

  async request(method: string, url: string, options: { body?: string; contentType?: string } = {}): Promise<Answer> {
    const u = new URL(url);
    const res = await this.app.inject({
      method: method as 'GET',
      url: u.pathname,
      headers: { host: u.host, ...(options.body !== undefined ? { 'content-type': options.contentType ?? 'application/jose+json' } : {}) },
      ...(options.body !== undefined ? { payload: options.body } : {}),
    });
    let json: Record<string, any> = {};
    try {
      json = JSON.parse(res.body);
    } catch {
      // not JSON (PEM, empty)
    }
    return { status: res.statusCode, headers: res.headers as Answer['headers'], body: res.body, json };
  }

  async nonce(directory: Record<string, any>): Promise<string> {
    const res = await this.request('HEAD', directory.newNonce);
    return res.headers['replay-nonce'] as string;
  }

  /** A signed body; `header` overrides the protected header, payload null is POST-as-GET. */
  async sign(url: string, payload: unknown, header: Record<string, unknown>, key: KeyLike = this.privateKey): Promise<string> {
    const bytes = payload === null ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(payload));
    const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg: this.alg, url, ...(this.kid ? { kid: this.kid } : { jwk: this.jwk }), ...header } as never).sign(key);
    return JSON.stringify(jws);
  }

  async post(directory: Record<string, any>, url: string, payload: unknown, header: Record<string, unknown> = {}): Promise<Answer> {
    const nonce = await this.nonce(directory);
    return this.request('POST', url, { body: await this.sign(url, payload, { nonce, ...header }) });
  }
}
