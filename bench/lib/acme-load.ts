// An in-process ACME client for the acme benchmark: one account (ES256, reused), then complete issuances —
// new-order → authorization → challenge → (poll) → finalize → (poll) → certificate download — at a fixed
// concurrency over keep-alive HTTPS. Nonces come from the answers' Replay-Nonce (a pool; HEAD new-nonce when
// empty); a badNonce is retried. Written for the benchmark only: it checks statuses, not the protocol.
import { Agent, request } from 'node:https';
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from 'jose';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export class AcmeLoad {
  private readonly agent: Agent;
  private readonly nonces: string[] = [];
  private directory!: Record<string, string>;
  private kid!: string;
  private key!: Key;
  private jwk!: JWK;

  constructor(
    private readonly directoryUrl: string,
    concurrency: number,
  ) {
    // Both servers present certificates of their own test CAs: the TLS cost is paid, the chain not checked.
    this.agent = new Agent({ keepAlive: true, maxSockets: concurrency, rejectUnauthorized: false });
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: string, url: string, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method, agent: this.agent, headers: body === undefined ? {} : { 'content-type': 'application/jose+json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const nonce = res.headers['replay-nonce'];
          if (typeof nonce === 'string') this.nonces.push(nonce);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
        });
        res.on('error', reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  private async nonce(): Promise<string> {
    const pooled = this.nonces.pop();
    if (pooled) return pooled;
    await this.send('HEAD', this.directory.newNonce!);
    return this.nonces.pop()!;
  }

  /** A signed POST (payload null: POST-as-GET), retried on badNonce. */
  async post(url: string, payload: unknown, useJwk = false): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const protectedHeader = { alg: 'ES256', nonce: await this.nonce(), url, ...(useJwk ? { jwk: this.jwk } : { kid: this.kid }) };
      const bytes = payload === null ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(payload));
      const jws = await new FlattenedSign(bytes).setProtectedHeader(protectedHeader).sign(this.key);
      const answer = await this.send('POST', url, JSON.stringify(jws));
      if (answer.status === 400 && answer.body.includes('badNonce') && attempt < 5) continue;
      return answer;
    }
  }

  async setUp(): Promise<void> {
    const dir = await this.send('GET', this.directoryUrl);
    if (dir.status !== 200) throw new Error(`directory ${this.directoryUrl}: ${dir.status} ${dir.body}`);
    this.directory = JSON.parse(dir.body) as Record<string, string>;
    const pair = await generateKeyPair('ES256', { extractable: true });
    this.key = pair.privateKey;
    this.jwk = await exportJWK(pair.publicKey);
    const account = await this.post(this.directory.newAccount!, { termsOfServiceAgreed: true }, true);
    if (account.status !== 201 && account.status !== 200) throw new Error(`new-account: ${account.status} ${account.body}`);
    this.kid = account.headers.location as string;
  }

  private async until(url: string, done: (body: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (let i = 0; i < 600; i++) {
      const res = await this.post(url, null);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      if (body.status === 'invalid') throw new Error(`${url} turned invalid: ${res.body}`);
      if (done(body)) return body;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${url} did not settle`);
  }

  /** One complete issuance for `name` with the CSR (DER, base64url); answers the PEM chain. */
  async issue(name: string, csr: string): Promise<string> {
    const ordered = await this.post(this.directory.newOrder!, { identifiers: [{ type: 'dns', value: name }] });
    if (ordered.status !== 201) throw new Error(`new-order: ${ordered.status} ${ordered.body}`);
    const orderUrl = ordered.headers.location as string;
    const order = JSON.parse(ordered.body) as { authorizations: string[]; finalize: string };
    for (const authzUrl of order.authorizations) {
      const authz = JSON.parse((await this.post(authzUrl, null)).body) as { status: string; challenges: { type: string; url: string }[] };
      if (authz.status === 'valid') continue;
      const challenge = authz.challenges.find((c) => c.type === 'http-01')!;
      const answered = await this.post(challenge.url, {});
      if (answered.status !== 200) throw new Error(`challenge: ${answered.status} ${answered.body}`);
      await this.until(authzUrl, (b) => b.status === 'valid');
    }
    await this.until(orderUrl, (b) => b.status === 'ready' || b.status === 'valid');
    const finalized = await this.post(order.finalize, { csr });
    if (finalized.status !== 200) throw new Error(`finalize: ${finalized.status} ${finalized.body}`);
    let state = JSON.parse(finalized.body) as { status: string; certificate?: string };
    if (state.status !== 'valid') state = (await this.until(orderUrl, (b) => b.status === 'valid')) as typeof state;
    const cert = await this.post(state.certificate!, null);
    if (cert.status !== 200 || !cert.body.includes('BEGIN CERTIFICATE')) throw new Error(`certificate: ${cert.status} ${cert.body.slice(0, 200)}`);
    return cert.body;
  }
}

/** Runs `n` issuances with `concurrency` workers; answers issuances per second. */
export async function issuanceRate(load: AcmeLoad, jobs: { name: string; csr: string }[], concurrency: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= jobs.length) return;
        await load.issue(jobs[i]!.name, jobs[i]!.csr);
      }
    }),
  );
  return jobs.length / ((performance.now() - started) / 1000);
}
