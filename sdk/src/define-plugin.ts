import type { PluginContext } from './context.js';

export interface PluginDefinition {
  /** Called once at boot: register what the plugin provides. Throwing marks the plugin degraded. */
  register(ctx: PluginContext): void | Promise<void>;
  /** Called after the HTTP server is ready. */
  start?(): void | Promise<void>;
  /** Called on shutdown, in reverse start order. */
  stop?(): void | Promise<void>;
}

const BRAND = Symbol.for('certwright.plugin');

export type DefinedPlugin = PluginDefinition & { readonly [BRAND]: true };

/** The default export of every plugin entry module. */
export function definePlugin(definition: PluginDefinition): DefinedPlugin {
  if (typeof definition?.register !== 'function') {
    throw new TypeError('definePlugin: `register(ctx)` is required');
  }
  return Object.freeze({ ...definition, [BRAND]: true as const });
}

export function isDefinedPlugin(value: unknown): value is DefinedPlugin {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
