/**
 * EST answers errors as a short plain-text body (RFC 7030 §4.2.3): the status, then a stable code and a
 * sentence a device log can show. Codes are EST-xxx; the same code is the event's `payload.code`.
 */
export class EstError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 413 | 415 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const EST_ERRORS = {
  contentType: (got: string) => new EstError(415, 'EST-001', `Content-Type must be application/pkcs10, not ${got.slice(0, 80) || 'none'}`),
  encoding: (why: string) => new EstError(400, 'EST-002', `The body is not a base64 PKCS#10 request: ${why}`),
  tooLarge: () => new EstError(413, 'EST-003', 'The request body is too large'),
  noProfile: (name: string) => new EstError(404, 'EST-004', `No EST service for profile ${name.slice(0, 191)}`),
  unauthenticated: () => new EstError(401, 'EST-005', 'Authentication required: HTTP Basic with a local account or a one-time challenge, or a TLS client certificate'),
  badCredentials: () => new EstError(401, 'EST-006', 'The credentials or the challenge are not valid'),
  reenrollCertificate: (why: string) => new EstError(403, 'EST-007', `Re-enrollment needs the current certificate (as TLS client certificate, or its key signing the CSR): ${why}`),
  subjectChange: () => new EstError(400, 'EST-008', 'The CSR must keep the subject of the certificate it renews'),
  refused: (code: string, message: string) => new EstError(400, 'EST-009', `${code}: ${message}`),
  denied: (why: string) => new EstError(400, 'EST-010', `The request was denied: ${why}`),
} as const;
