// The simulator's defaults, apart from its engine so the CLI's help can show them without loading it.
export const DEFAULT_YEARS = 5;
export const DEFAULT_RENEW_BEFORE = 0.33;
