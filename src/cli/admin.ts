/**
 * Operator CLI for self-hosters without billing: `npm run admin -- <command> [options]`.
 * It uses the same configuration (DATABASE_URL, DATA_DIR, ...) and domain code as the server.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.ts';
import { buildDeps } from '../deps.ts';
import { normalizeEmail } from '../domain/accounts/normalize-email.ts';
import { signUp } from '../domain/accounts/sign-up.ts';
import { AppError } from '../domain/errors.ts';
import { isPlanName, PLAN_NAMES } from '../domain/plans.ts';
import { getUsage } from '../domain/quota/get-usage.ts';
import { silentLogger } from '../lib/logger.ts';
import { toIso } from '../lib/time.ts';

const USAGE = `usage: npm run admin -- <command> [options]

commands:
  create-user --email E --password-stdin [--plan free|pro]
                                                           create an account, the password read
                                                           from the first line of stdin (or
                                                           --password P, visible in ps/history)
  set-plan    --email E --plan free|pro                    change an account's plan (next request)
  usage       --email E                                    show the account's plan and usage
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      plan: { type: 'string' },
    },
    strict: true,
  });
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const need = (name: 'email' | 'password' | 'plan'): string => {
    const v = values[name];
    if (!v) throw new AppError('invalid_request', `--${name} is required`);
    return v;
  };
  const plan = (): 'free' | 'pro' => {
    const p = need('plan');
    if (!isPlanName(p) || p === 'demo') {
      throw new AppError(
        'invalid_request',
        `--plan must be one of ${PLAN_NAMES.filter((n) => n !== 'demo').join(', ')}`,
      );
    }
    return p;
  };

  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  // Silent, like LOG_LEVEL above: the CLI's output is its own lines on stdout (a result
  // scripts may read) and its errors on stderr, as main() reports them; the service's log
  // lines (Redis or LISTEN reconnects, the background pumps buildDeps starts) must not mix
  // into either.
  const deps = await buildDeps(config, { logger: silentLogger });
  const { ctx } = deps;
  try {
    switch (command) {
      case 'create-user': {
        const chosen = values.plan ? plan() : 'free';
        const password = values['password-stdin'] ? await firstLineOfStdin() : need('password');
        const { user } = await signUp(ctx, { email: need('email'), password });
        if (chosen !== 'free') await ctx.store.users.setPlan(user.id, chosen, ctx.clock());
        process.stdout.write(`created user ${user.id} <${user.email}> on plan ${chosen}\n`);
        return 0;
      }
      case 'set-plan': {
        const p = plan();
        const found = await ctx.store.users.findByEmail(normalizeEmail(need('email')));
        if (!found) throw new AppError('not_found', 'no user with that email');
        await ctx.store.users.setPlan(found.user.id, p, ctx.clock());
        process.stdout.write(`user ${found.user.id} <${found.user.email}> is now on plan ${p}\n`);
        return 0;
      }
      case 'usage': {
        const found = await ctx.store.users.findByEmail(normalizeEmail(need('email')));
        if (!found) throw new AppError('not_found', 'no user with that email');
        const usage = await getUsage(ctx, { user: found.user });
        process.stdout.write(
          `user ${found.user.id} <${found.user.email}>\n` +
            `  plan:      ${usage.plan}\n` +
            `  used:      ${usage.used} of ${usage.limit} this month (${usage.remaining} left)\n` +
            `  period:    ${toIso(usage.periodStart)} to ${toIso(usage.resetsAt)}\n`,
        );
        return 0;
      }
      default:
        process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } finally {
    await deps.close();
  }
}

async function firstLineOfStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 4096) break;
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (!line) throw new AppError('invalid_request', 'no password on stdin');
  return line;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof AppError || err instanceof ConfigError) {
      process.stderr.write(`error: ${err.message}\n`);
    } else {
      process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.exit(1);
  },
);
