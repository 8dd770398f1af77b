/**
 * Typed errors a plugin throws so the kernel knows what to do next: retry later (transient),
 * wait (pending), give up (permanent) or tell the administrator (configuration).
 */
export class PluginError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The back-end accepted the work but has no answer yet; poll again after `retryAfterSeconds`. */
export class PendingError extends PluginError {
  constructor(message: string, readonly retryAfterSeconds = 60, readonly pollToken?: string) {
    super(message);
  }
}

/** The operation can never succeed as asked (bad CSR, refused by policy...). Do not retry. */
export class PermanentError extends PluginError {}

/** The instance is misconfigured (bad credentials, unknown CA...). Do not retry until reconfigured. */
export class ConfigurationError extends PluginError {}

/** A passing failure (timeout, 503, connection reset). The kernel retries with backoff. */
export class TransientError extends PluginError {
  constructor(message: string, readonly retryAfterSeconds?: number, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A request to a host the manifest's `egress` list does not name. */
export class EgressDeniedError extends ConfigurationError {}

/**
 * An identity provider recognised credentials and refused them (a client certificate it judged, one forwarded from
 * an untrusted address): the request answers 401 SEC-AUTH-006 rather than "no credentials", and other providers
 * are still asked. The provider records why (an event, its log); the caller is not told. Since SDK 1.10.
 */
export class CredentialsRefusedError extends PluginError {}
