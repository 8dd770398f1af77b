import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * The four problems every configuration type answers, under its own code family (client-compat: the MCP
 * client reads `<FAMILY>-002` invalid, `-003` unknown, `-004` exists, `-005` referenced).
 */
export type ConfigProblemKind = 'invalid' | 'unknown' | 'exists' | 'referenced';

export const PROBLEM_SUFFIX: Record<ConfigProblemKind, string> = { invalid: '002', unknown: '003', exists: '004', referenced: '005' };

export function configProblemEntries(family: string, noun: string): Record<string, CatalogueEntry> {
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  return {
    [`${family}-002`]: { status: 400, title: `Invalid ${noun}`, message: `The ${noun} is not valid` },
    [`${family}-003`]: { status: 404, title: `${Noun} not found`, message: `No ${noun} has this name` },
    [`${family}-004`]: { status: 400, title: `${Noun} exists`, message: `A ${noun} with this name already exists` },
    [`${family}-005`]: { status: 400, title: `${Noun} referenced`, message: `The ${noun} is in use` },
  };
}

/** Codes of the registry's own routes (export/import, the cookbook); each type's family comes from its declaration. */
export const CONFIG_OBJECT_ERRORS = {
  // Export/import (core/config-objects/transfer).
  'CONFIG-002': { status: 400, title: 'Invalid configuration document', message: 'The configuration document is not valid' },
  'CONFIG-005': { status: 400, title: 'Configuration import refused', message: 'The configuration document cannot be imported as it is' },
  // The cookbook (spec "Errors": Adoc001, 500).
  'ADOC-001': { status: 500, title: 'Cookbook failure', message: 'The configuration cookbook could not be generated' },
} as const satisfies Record<string, CatalogueEntry>;
