import type { ConfigObjectType } from '@certwright/sdk';
import type { ConfigRegistry } from './registry.js';

/**
 * The collections that predate the registry, declared on it once their own modules exist (the kernel calls
 * this after the PKI, inventory, security, trigger and enrollment services are built, before the plugins'
 * types and the routes). Each declaration lives in its collection's folder; this list only gathers them.
 */
export interface CollectionDeclarations {
  /** Each returns the collection's type, built on the services the kernel passes (see kernel.ts). */
  readonly [collection: string]: () => ConfigObjectType;
}

export function declareCollections(registry: ConfigRegistry, declarations: CollectionDeclarations): void {
  for (const declare of Object.values(declarations)) registry.declare(declare());
}
