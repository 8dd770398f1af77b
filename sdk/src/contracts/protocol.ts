/**
 * A protocol plugin mounts its routes on a scope the kernel hands it. The scope is an encapsulated
 * fastify instance already gated to the manifest's capability; the SDK types it loosely so plugins do
 * not depend on the kernel's fastify version.
 *
 * Protocol routes are public (the protocol authenticates its clients). An administration route of the
 * protocol (its accounts, orders…) sets `config.access: { permission: 'configuration:<section>:read|write' }`
 * and a URL under `/api/v1/`: the kernel then gates it to capability `configuration` and the authorizer
 * checks the permission, as for every core administration route (since SDK 1.8). Any other route answers on
 * the manifest's capability, its declared access checked by the authorizer.
 */
export interface RouteScope {
  route(options: {
    method: string | string[];
    url: string;
    schema?: Record<string, unknown>;
    config?: Record<string, unknown>;
    /** Answers this route's errors, those of the body parser included (a protocol's own error form). Since SDK 1.9. */
    errorHandler?: (error: unknown, request: any, reply: any) => unknown;
    handler: (request: any, reply: any) => unknown;
  }): unknown;
  addContentTypeParser(
    contentType: string | string[] | RegExp,
    options: { parseAs: 'buffer' | 'string'; bodyLimit?: number },
    parser: (request: any, body: Buffer | string, done: (err: Error | null, body?: unknown) => void) => void,
  ): unknown;
}

export interface ProtocolPlugin {
  registerRoutes(scope: RouteScope): void | Promise<void>;
}
