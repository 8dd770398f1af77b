import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of automation (execution policies). The spec's error schemas ExecutionPolicy001/002/004
 * (interface-spec "Errors") are answered as EXECUTION-POLICY-001/-002/-004, the form of every other code
 * here (SecAuth001 → SEC-AUTH-001, Adoc001 → ADOC-001); the vendor's MCP client names -005 for a delete
 * refused while an automation policy references the execution policy. The spec does not show the condition
 * behind each (its rule 3): 001 is a failure of the store (500), 002 an invalid policy (add, update), 003 an
 * unknown name (the registry's family), 004 a name taken (add only), 005 referenced (delete).
 */
export const AUTOMATION_ERRORS = {
  'EXECUTION-POLICY-001': { status: 500, title: 'Execution policy failure', message: 'The execution policies could not be read or written' },
  'EXECUTION-POLICY-002': { status: 400, title: 'Invalid execution policy', message: 'The execution policy is not valid' },
  'EXECUTION-POLICY-003': { status: 404, title: 'Execution policy not found', message: 'No execution policy has this name' },
  'EXECUTION-POLICY-004': { status: 400, title: 'Execution policy exists', message: 'An execution policy with this name already exists' },
  'EXECUTION-POLICY-005': { status: 400, title: 'Execution policy referenced', message: 'The execution policy is in use' },
} as const satisfies Record<string, CatalogueEntry>;
