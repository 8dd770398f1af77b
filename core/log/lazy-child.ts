import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/**
 * fastify gives every request a child logger carrying its request id. Creating a pino child costs more
 * than the rest of a small request's kernel overhead, yet most requests never log (request logging is
 * off by default). This stands in for the child and creates the real one on the first log call.
 */
class LazyChildLogger {
  #child: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.#child ??= this.parent.child(this.childBindings, this.options));
  }
  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  fatal(...args: unknown[]): void {
    (this.real.fatal as (...a: unknown[]) => void)(...args);
  }
  error(...args: unknown[]): void {
    (this.real.error as (...a: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real.warn as (...a: unknown[]) => void)(...args);
  }
  info(...args: unknown[]): void {
    (this.real.info as (...a: unknown[]) => void)(...args);
  }
  debug(...args: unknown[]): void {
    (this.real.debug as (...a: unknown[]) => void)(...args);
  }
  trace(...args: unknown[]): void {
    (this.real.trace as (...a: unknown[]) => void)(...args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }
  bindings(): Bindings {
    return this.real.bindings();
  }
}

export function lazyChildLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  return new LazyChildLogger(parent, bindings, options) as unknown as Logger;
}
