/**
 * A small RFC 8555 client: directory, nonces (newNonce, Replay-Nonce, one retry on badNonce), JWS requests
 * signed with the account key (ES256; `jwk` for newAccount, `kid` after), and problem documents.
 * It knows nothing of orders' meaning; src/connector.ts drives the protocol.
 */
import type { KeyObject } from 'node:crypto';
import { FlattenedSign, type JWK } from 'jose';
import { ConfigurationError, TransientError, type PluginLogger } from '@certwright/sdk';
import type { HttpResponse, Transport } from './transport.js';

export const ACME_ERROR = 'urn:ietf:params:acme:error:';

/** An ACME problem document (RFC 8555 §6.7) the server answered, or an HTTP error without one. */
export class AcmeProblem extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly detail: string,
    readonly url: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${type || `HTTP ${status}`}: ${detail}`);
    this.name = 'AcmeProblem';
  }
  /** `rejectedIdentifier` for `urn:ietf:params:acme:error:rejectedIdentifier`. */
  get short(): string {
    return this.type.startsWith(ACME_ERROR) ? this.type.slice(ACME_ERROR.length) : this.type;
  }
}

export interface Directory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
  revokeCert?: string;
  keyChange?: string;
  meta?: { termsOfService?: string; website?: string; caaIdentities?: string[]; externalAccountRequired?: boolean };
}

export interface AccountKey {
  privateKey: KeyObject;
  /** The public key as a JWK (what newAccount and External Account Binding sign). */
  jwk: JWK;
}

export interface AcmeResponse {
  status: number;
  header(name: string): string | undefined;
  body: Buffer;
  json<T>(): T;
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), bounded to [1, 86400]. */
export function retryAfterOf(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Math.ceil((Date.parse(value) - now) / 1000);
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(86_400, Math.max(1, seconds));
}

const MAX_DETAIL = 500;
const encoder = new TextEncoder();

function toResponse(res: HttpResponse): AcmeResponse {
  return {
    status: res.status,
    header: res.header,
    body: res.body,
    json<T>() {
      try {
        return JSON.parse(res.body.toString('utf8')) as T;
      } catch {
        throw new TransientError(`the ACME server answered HTTP ${res.status} with a body that is not JSON`);
      }
    },
  };
}

function problemOf(res: HttpResponse, url: string): AcmeProblem {
  let type = '';
  let detail = `HTTP ${res.status}`;
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as { type?: unknown; detail?: unknown; subproblems?: { identifier?: { value?: string }; detail?: string }[] };
    if (typeof doc.type === 'string') type = doc.type;
    if (typeof doc.detail === 'string' && doc.detail) detail = doc.detail;
    if (Array.isArray(doc.subproblems) && doc.subproblems.length) {
      detail += ` (${doc.subproblems.map((s) => `${s.identifier?.value ?? '?'}: ${s.detail ?? ''}`).join('; ')})`;
    }
  } catch {
    // Not JSON: keep the status line.
  }
  return new AcmeProblem(res.status, type, detail.slice(0, MAX_DETAIL), url, retryAfterOf(res.header('retry-after')));
}

export class AcmeClient {
  private directoryPromise: Promise<Directory> | undefined;
  private readonly nonces: string[] = [];

  constructor(
    readonly directoryUrl: string,
    private readonly transport: Transport,
    private readonly log: PluginLogger,
  ) {}

  /** The directory, fetched once (again after a failure). */
  directory(): Promise<Directory> {
    this.directoryPromise ??= this.fetchDirectory().catch((err: unknown) => {
      this.directoryPromise = undefined;
      throw err;
    });
    return this.directoryPromise;
  }

  /** GET the directory now and check it names the resources an ACME client needs. */
  async fetchDirectory(): Promise<Directory> {
    const res = await this.transport.send('GET', this.directoryUrl, { accept: 'application/json' });
    this.checkRedirect(res, this.directoryUrl);
    if (res.status >= 500) throw new TransientError(`ACME directory ${this.directoryUrl} answered HTTP ${res.status}`, retryAfterOf(res.header('retry-after')));
    if (res.status !== 200) throw new ConfigurationError(`ACME directory ${this.directoryUrl} answered HTTP ${res.status}`);
    let dir: Partial<Directory>;
    try {
      dir = JSON.parse(res.body.toString('utf8')) as Partial<Directory>;
    } catch {
      throw new ConfigurationError(`${this.directoryUrl} is not an ACME directory (not JSON)`);
    }
    const missing = (['newNonce', 'newAccount', 'newOrder'] as const).filter((k) => typeof dir[k] !== 'string');
    if (missing.length) throw new ConfigurationError(`${this.directoryUrl} is not an ACME directory (no ${missing.join(', ')})`);
    return dir as Directory;
  }

  private checkRedirect(res: HttpResponse, url: string): void {
    if (res.status >= 300 && res.status < 400) {
      throw new ConfigurationError(`${url} answers a redirect (HTTP ${res.status}) to ${res.header('location') ?? '?'}: configure the final URL`);
    }
  }

  private remember(res: HttpResponse): void {
    const nonce = res.header('replay-nonce');
    if (nonce && /^[A-Za-z0-9_-]+$/.test(nonce)) {
      this.nonces.push(nonce);
      if (this.nonces.length > 16) this.nonces.shift();
    }
  }

  private async nonce(): Promise<string> {
    const cached = this.nonces.pop();
    if (cached) return cached;
    const { newNonce } = await this.directory();
    const res = await this.transport.send('HEAD', newNonce, {});
    this.checkRedirect(res, newNonce);
    const nonce = res.header('replay-nonce');
    if (!nonce) {
      if (res.status >= 500) throw new TransientError(`newNonce answered HTTP ${res.status}`);
      throw new TransientError(`newNonce (${newNonce}) answered HTTP ${res.status} without a Replay-Nonce`);
    }
    return nonce;
  }

  /**
   * A JWS POST (RFC 8555 §6.2). `payload` undefined is a POST-as-GET. `kid` null signs with the `jwk`
   * header (newAccount, and revocation by certificate key). A badNonce answer is retried once with the
   * nonce it carries; any other error status throws an AcmeProblem.
   */
  async post(url: string, payload: unknown, key: AccountKey, kid: string | null, accept?: string): Promise<AcmeResponse> {
    const bytes = payload === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(payload));
    for (let attempt = 0; ; attempt++) {
      const nonce = await this.nonce();
      const jws = await new FlattenedSign(bytes)
        .setProtectedHeader({ alg: 'ES256', nonce, url, ...(kid ? { kid } : { jwk: key.jwk }) })
        .sign(key.privateKey);
      const res = await this.transport.send('POST', url, { 'content-type': 'application/jose+json', ...(accept ? { accept } : {}) }, JSON.stringify(jws));
      this.remember(res);
      this.checkRedirect(res, url);
      if (res.status < 400) return toResponse(res);
      const problem = problemOf(res, url);
      if (problem.short === 'badNonce' && attempt === 0) {
        this.log.debug({ url }, 'badNonce: retrying once with a fresh nonce');
        continue;
      }
      throw problem;
    }
  }
}
