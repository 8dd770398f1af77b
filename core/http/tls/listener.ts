/**
 * The HTTPS listener: a node:https server beside the HTTP one, handing every request to the same fastify
 * instance (app.routing), so both pass through the same host/capability gate and routes. A client
 * certificate is requested when configured (X509 login and EST re-enrollment read it) but never required by
 * the TLS layer: the routes that need one check it. A renewed certificate is swapped in with
 * setSecureContext, without a restart or a dropped connection.
 */
import { createServer, type Server } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { ServerCredentials } from './server-certificate.js';

export class HttpsListener {
  private server: Server | undefined;

  constructor(
    private readonly app: FastifyInstance,
    private readonly options: { host: string; port: number; requestClientCert: boolean },
  ) {}

  /** Listens; answers the address bound (`https://host:port`). */
  async start(credentials: ServerCredentials): Promise<string> {
    const server = createServer({ cert: credentials.cert, key: credentials.key, requestCert: this.options.requestClientCert, rejectUnauthorized: false, minVersion: 'TLSv1.2' }, (req, res) => this.app.routing(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : this.options.port;
    const host = typeof address === 'object' && address?.family === 'IPv6' ? `[${address.address}]` : typeof address === 'object' && address ? address.address : this.options.host;
    return `https://${host}:${port}`;
  }

  /** The port actually bound (0 asks the system for one). */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : undefined;
  }

  renew(credentials: ServerCredentials): void {
    this.server?.setSecureContext({ cert: credentials.cert, key: credentials.key });
  }

  closeIdle(): void {
    this.server?.closeIdleConnections();
  }

  closeAll(): void {
    this.server?.closeAllConnections();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
