import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../services.js';
import { runRoute } from './run-route.js';
import { triggerRoutes } from './routes.js';
import { rememberRuntime, TriggerRuntime } from './runtime.js';

export { triggerRuntimeOf } from './runtime.js';

/** Triggers: configuration routes, dispatch and delivery jobs, the expiry scan, the run route. */
export async function registerTriggers(app: FastifyInstance, services: CoreServices): Promise<void> {
  const runtime = new TriggerRuntime(services);
  rememberRuntime(app, runtime);
  await runtime.install(app);
  await app.register(triggerRoutes, { services, runtime });
  await app.register(runRoute, { services, runtime });
}
