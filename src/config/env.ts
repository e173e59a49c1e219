/**
 * Small, dependency-free readers for environment variables. Each reader records a
 * problem instead of throwing, so that boot can list every problem at once.
 */
export type Env = Record<string, string | undefined>;

export class EnvReader {
  readonly problems: string[] = [];
  private readonly env: Env;

  constructor(env: Env) {
    this.env = env;
  }

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optional(name: string): string | undefined {
    return this.raw(name);
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value)) {
      this.problems.push(`${name} must be an integer, got "${value}"`);
      return fallback;
    }
    const n = Number(value);
    if (n < min || n > max) {
      this.problems.push(`${name} must be between ${min} and ${max}, got ${n}`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false, got "${value}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, protocols: readonly string[]): URL | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    try {
      const url = new URL(value);
      if (!protocols.includes(url.protocol)) {
        this.problems.push(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
        return undefined;
      }
      return url;
    } catch {
      this.problems.push(`${name} is not a valid URL`);
      return undefined;
    }
  }

  problem(message: string): void {
    this.problems.push(message);
  }
}
