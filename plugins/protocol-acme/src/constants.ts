/** Validation methods the server offers (RFC 8555 §8.3, §8.4; RFC 8737). */
export const CHALLENGE_TYPES = ['http-01', 'dns-01', 'tls-alpn-01'] as const;
/** The job that validates one challenge. */
export const VALIDATE_JOB = 'acme-validate';
