/**
 * The one logger shape the service writes to: what pino (and so Fastify's `app.log`) offers.
 * Every module that logs takes this type; `silentLogger` stands in where nothing should be written.
 */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const ignore = (): void => {};

/** A logger that writes nothing. */
export const silentLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
