/**
 * A protocol plugin mounts its routes on a scope the kernel hands it. The scope is an encapsulated
 * fastify instance already gated to the manifest's capability; the SDK types it loosely so plugins do
 * not depend on the kernel's fastify version.
 */
export interface RouteScope {
  route(options: {
    method: string | string[];
    url: string;
    schema?: Record<string, unknown>;
    config?: Record<string, unknown>;
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
