import { asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * One root container per process (strict mode: no lifetime leaks, no unregistered lookups). Each request
 * gets a child scope carrying its tenant and logger, created only when a handler asks for it.
 */
export function createRootContainer(): AwilixContainer {
  return createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
}

const SCOPE = Symbol('certwright.diScope');

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's awilix scope: root registrations plus `tenant` and `log`. */
    readonly diScope: AwilixContainer;
  }
}

export function installRequestScope(app: FastifyInstance, root: AwilixContainer): void {
  app.decorateRequest('diScope', {
    getter(this: FastifyRequest & { [SCOPE]?: AwilixContainer }) {
      let scope = this[SCOPE];
      if (!scope) {
        scope = root.createScope();
        scope.register({ tenant: asValue(this.tenant), log: asValue(this.log) });
        this[SCOPE] = scope;
      }
      return scope;
    },
  });
}
