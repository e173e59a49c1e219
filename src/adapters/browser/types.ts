/** The logger shape the browser adapter writes to (pino- and Fastify-compatible). */
export interface RendererLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
