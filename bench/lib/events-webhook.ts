// Webhook deliveries/s for bench/events.ts: a real kernel (SQLite, its own data dir), real certificates, one
// webhook trigger, a local receiver.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { loadConfig } from '../../core/config/index.js';
import type { InventoryContext } from '../../core/inventory/index.js';
import { Kernel } from '../../core/kernel.js';
import { toPem } from '../../core/pki/input.js';
import { CertificateIssuer } from '../../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';

const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
const HEADERS = { 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET, host: 'localhost' };
const DAY = 86_400_000;
const WEBHOOK_SECRET = 'bench-webhook-secret-0123456789';

/** A receiver that answers 204 and counts what it gets; resolves `done` at `expected` requests. */
function receiver(expected: number): Promise<{ server: Server; url: string; done: Promise<void>; count: () => number }> {
  let count = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['x-certwright-signature']) count++;
      res.writeHead(204).end();
      if (count === expected) finish();
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/hook`, done, count: () => count });
    }),
  );
}

/** `total` signed POSTs by `senders` concurrent loops, each waiting for its answer (the channel's pattern). */
async function directPosts(url: string, total: number, senders: number, signature: (n: number) => string): Promise<number> {
  let next = 0;
  const post = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ n, code: 'CERTIFICATE-REVOKED' });
      const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-certwright-signature': `sha256=${signature(n)}` } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const start = performance.now();
  await Promise.all(Array.from({ length: senders }, async () => {
    for (let i = next++; i < total; i = next++) await post(i);
  }));
  return (total / (performance.now() - start)) * 1000;
}

export async function webhookDeliveries(total: number, senders: number, signature: (n: number) => string): Promise<{ delivered: number; direct: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-bench-webhook-'));
  const sink = await receiver(total);
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      log: { level: 'warn' },
      security: { adminSecret: ADMIN_SECRET },
      plugins: { instances: { 'trigger-webhook': [{ name: 'default', config: { allowHttp: true, allowPrivateNetworks: true } }] } },
    },
  });
  const kernel = await Kernel.boot({ config, logger: pino({ level: 'warn' }) });
  try {
    // Real certificates in the inventory: a delivery reads its certificate's summary.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const now = Date.now();
    const issuer = new CertificateIssuer({
      caCertificateDer: selfSignedCertificate(privateKey, { subject: 'CN=Bench CA', notBefore: now - DAY, notAfter: now + 3650 * DAY }),
      caKey: privateKey,
    });
    const leaf = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const spki = new Uint8Array(leaf.publicKey.export({ type: 'spki', format: 'der' }));
    const inventory = kernel.container.resolve<InventoryContext>('inventory');
    const ids: string[] = [];
    for (let i = 0; i < total; i++) {
      const der = issuer.issueForKey(spki, { subject: `CN=host-${i}.example.com`, sans: [{ sanType: 'DNSNAME', value: `host-${i}.example.com` }], notBefore: now - DAY, notAfter: now + 90 * DAY });
      ids.push((await inventory.repository.insert('default', { certificate: toPem(der), contactEmail: `owner-${i}@example.com` }))._id);
    }
    const created = await kernel.app.inject({
      method: 'POST',
      url: '/api/v1/triggers/',
      headers: HEADERS,
      payload: { name: 'bench-webhook', channel: 'webhook', target: { url: sink.url, secret: WEBHOOK_SECRET }, events: ['revoked'] },
    });
    if (created.statusCode !== 201 && created.statusCode !== 200) throw new Error(`trigger not created: ${created.statusCode} ${created.body}`);

    // Timed: the events appended by `senders` writers, then dispatch and delivery until the receiver has them all.
    const start = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: senders }, async () => {
      for (let i = next++; i < total; i = next++) {
        await kernel.events.append({ tenant: 'default', code: 'CERTIFICATE-REVOKED', module: 'bench', status: 'success', objectType: 'certificate', objectId: ids[i]!, payload: { reason: 'superseded' } });
      }
    }));
    await Promise.race([
      sink.done,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${sink.count()} of ${total} deliveries in 10 minutes`)), 600_000).unref()),
    ]);
    const delivered = (total / (performance.now() - start)) * 1000;
    const direct = await directPosts(sink.url, total, senders, signature);
    return { delivered, direct };
  } finally {
    await kernel.stop();
    sink.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
