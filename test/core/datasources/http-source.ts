/**
 * A CMDB answering JSON over HTTP (node:http on a loopback port), for the HTTP datasource tests: `/hosts` wants
 * the bearer token, `/basic` HTTP Basic, and the other paths each answer one way a source can go wrong. It
 * records the Authorization headers it received, so a test can see that a credential reached it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from '../../helpers/kernel.js';

export const TOKEN = 'Cmdb-Bearer-Token-Of-The-Test-5c1e';
export const BASIC = { login: 'cmdb-reader', password: 'Cmdb-Basic-Password-Of-The-Test-a4d2' } as const;

export const HOSTS = [
  { hostname: 'web1.example.com', owner: 'alice@example.com', team: { name: 'web', contacts: ['alice@example.com', 'dave@example.com'] } },
  { hostname: 'db1.example.com', owner: 'bob@example.com', team: { name: 'data', contacts: ['bob@example.com'] } },
  { hostname: 'Mail.Example.com', owner: 'carol@example.com', team: { name: 'mail', contacts: [] } },
];

export interface HttpSource {
  url: string;
  /** Authorization headers received, in order. */
  authorizations: string[];
  /** Request bodies received on /search. */
  bodies: string[];
}

export async function startHttpSource(t: TestContext): Promise<HttpSource> {
  const source: HttpSource = { url: '', authorizations: [], bodies: [] };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    source.authorizations.push(req.headers.authorization ?? '');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (path === '/hosts') return req.headers.authorization === `Bearer ${TOKEN}` ? json(res, 200, { items: HOSTS, total: HOSTS.length }) : json(res, 401, { error: 'unauthorized' });
      if (path === '/basic') return req.headers.authorization === `Basic ${Buffer.from(`${BASIC.login}:${BASIC.password}`).toString('base64')}` ? json(res, 200, HOSTS) : json(res, 401, {});
      if (path === '/keyed') return req.headers['x-api-key'] === TOKEN ? json(res, 200, { data: { hosts: HOSTS } }) : json(res, 403, {});
      if (path === '/search') {
        source.bodies.push(body);
        const wanted = (JSON.parse(body || '{}') as { owner?: string }).owner;
        return json(res, 200, HOSTS.filter((h) => h.owner === wanted));
      }
      if (path === '/many') return json(res, 200, Array.from({ length: 50 }, (_, i) => ({ hostname: `h${i}.example.com`, owner: `o${i}` })));
      if (path === '/huge') {
        // 9 MiB of JSON: past the 8 MiB the egress client reads.
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify([{ hostname: 'x', owner: 'y'.repeat(9 * 1024 * 1024) }]));
      }
      if (path === '/text') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>not json</html>');
      }
      if (path === '/scalars') return json(res, 200, [1, 2, 3]);
      if (path === '/slow') return; // never answers: the datasource's timeoutMs ends it
      return json(res, 404, { error: 'no such path' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  source.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return source;
}

/**
 * Setup outside any subtest: a failure throws (an assertion at the top level, between awaits, can land after tap
 * has ended the file's root test).
 */
export async function created(res: Promise<{ statusCode: number; body: string }>): Promise<void> {
  const answer = await res;
  if (answer.statusCode !== 201) throw new Error(`setup: expected 201, got ${answer.statusCode}: ${answer.body}`);
}
