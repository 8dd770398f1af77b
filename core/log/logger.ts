import { pino, type Logger, type DestinationStream, type LevelWithSilent } from 'pino';

/**
 * Paths pino blanks out, wherever they appear in a log object: credentials on requests and responses,
 * and the usual names of secret fields in configuration and plugin payloads.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-api-token"]',
  'req.headers["x-jwt-cert-pop"]',
  'req.headers["csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'headers["x-api-token"]',
  'password',
  'secret',
  'masterKey',
  'privateKey',
  'apiKey',
  'token',
  '*.password',
  '*.secret',
  '*.masterKey',
  '*.privateKey',
  '*.apiKey',
  '*.token',
  '*.*.password',
  '*.*.secret',
  '*.*.masterKey',
  '*.*.privateKey',
];

export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'certwright' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

export type { Logger };
