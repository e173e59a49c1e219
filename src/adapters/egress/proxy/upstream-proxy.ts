/**
 * Going out through an upstream proxy (docs/proxies.md): a tunnel to a checked target through
 * an operator's proxy or the caller's own, by HTTP CONNECT (an `http://` or `https://` proxy)
 * or SOCKS5 with a username and password (the `socks` package: Chromium alone cannot
 * authenticate to SOCKS). The caller's proxy is judged by the egress rules like a target and
 * connected to at the checked address; an operator's is trusted where it is configured. Every
 * failure is a ProxyFailure whose message names what went wrong and never the proxy's URL or
 * credentials.
 */
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { rootCertificates, connect as tlsConnect } from 'node:tls';
import { SocksClient } from 'socks';
import type { ProxyAddress } from '../../../domain/captures/proxy-url.ts';
import { isAppError } from '../../../domain/errors.ts';
import { checkDestination } from '../policy.ts';
import type { ProxyContext } from './context.ts';

/** Where one lane's traffic goes out (an operator proxy, or the caller's own). */
export interface ProxyRoute {
  /** How logs name it: the operator proxy's id, or `caller` (never its URL). */
  name: string;
  address: ProxyAddress;
  /** The caller's own: its host judged by the egress rules, pinned to the checked address. */
  judged: boolean;
  /** Target names handed to the proxy unresolved (its network resolves them). */
  remoteDns: boolean;
  /** Host names (`*.example.com` for subdomains too) that go out directly. */
  bypass: readonly string[];
  /** PEM certificates trusted for an `https://` proxy besides the system's. */
  ca: string | null;
}

/** The upstream proxy failed: `message` is what the capture's 502 `proxy_error` says. */
export class ProxyFailure extends Error {
  override readonly name = 'ProxyFailure';
}

/** The longest answer head a proxy may send to CONNECT. */
const MAX_CONNECT_HEAD = 16 * 1024;

/** Whether `host` goes out directly, past the route's proxy. */
export function bypasses(route: ProxyRoute, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return route.bypass.some((entry) =>
    entry.startsWith('*.')
      ? name.endsWith(entry.slice(1)) || name === entry.slice(2)
      : name === entry,
  );
}

/** Basic credentials for an HTTP proxy, or null. */
export function proxyAuthorization(address: ProxyAddress): string | null {
  if (address.username === null) return null;
  const pair = `${address.username}:${address.password ?? ''}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/**
 * A socket connected to the route's proxy (TLS for `https://`), not yet asked anything. The
 * caller's proxy is checked here again (the name may resolve elsewhere by now).
 */
export async function connectToProxy(ctx: ProxyContext, route: ProxyRoute): Promise<Socket> {
  if (ctx.closing) throw new ProxyFailure('proxy closed the connection');
  const { address } = route;
  let host = address.host;
  if (route.judged) {
    try {
      host = (await checkDestination(ctx.policy, address.host, address.port)).address;
    } catch (err) {
      const why = isAppError(err) ? err.message.replace(/^url /, 'proxy ') : 'check failed';
      throw new ProxyFailure(`proxy could not be reached: ${why}`);
    }
  }
  const tcp = await new Promise<Socket>((resolve, reject) => {
    const socket = netConnect({ host, port: address.port });
    track(ctx, socket);
    const timer = setTimeout(() => socket.destroy(timedOut()), ctx.proxyTimeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof ProxyFailure ? err : new ProxyFailure('proxy could not be reached'));
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
  });
  if (address.scheme !== 'https') return tcp;
  return new Promise<Socket>((resolve, reject) => {
    const secure = tlsConnect({
      socket: tcp,
      ...(isIP(address.host) === 0 ? { servername: address.host } : {}),
      ...(route.ca ? { ca: [...rootCertificates, route.ca] } : {}),
    });
    track(ctx, secure);
    const timer = setTimeout(() => secure.destroy(timedOut()), ctx.proxyTimeoutMs);
    secure.once('error', (err) => {
      clearTimeout(timer);
      tcp.destroy();
      reject(
        err instanceof ProxyFailure
          ? err
          : new ProxyFailure(`proxy TLS handshake failed (${tlsReason(err)})`),
      );
    });
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(secure);
    });
  });
}

/**
 * A tunnel to `target` through the route's proxy: CONNECT for an HTTP proxy, SOCKS5 CONNECT
 * otherwise. `target.host` is what the proxy is given: a name, or (socks5, which resolves
 * here) the checked address.
 */
export async function tunnelThrough(
  ctx: ProxyContext,
  route: ProxyRoute,
  target: { host: string; port: number },
): Promise<Socket> {
  const socket = await connectToProxy(ctx, route);
  try {
    if (route.address.scheme === 'http' || route.address.scheme === 'https') {
      await httpConnect(ctx, socket, route.address, target);
    } else {
      await socksConnect(ctx, socket, route.address, target);
    }
    return socket;
  } catch (err) {
    socket.destroy();
    throw err instanceof ProxyFailure ? err : new ProxyFailure('proxy failed');
  }
}

/** `CONNECT host:port`, its answer read up to the end of its head (the rest is the tunnel's). */
function httpConnect(
  ctx: ProxyContext,
  socket: Socket,
  address: ProxyAddress,
  target: { host: string; port: number },
): Promise<void> {
  const authority = `${isIP(target.host) === 6 ? `[${target.host}]` : target.host}:${target.port}`;
  const auth = proxyAuthorization(address);
  const head =
    `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n` +
    (auth === null ? '' : `Proxy-Authorization: ${auth}\r\n`) +
    '\r\n';
  return new Promise<void>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => finish(timedOut()), ctx.proxyTimeoutMs);
    const finish = (err: Error | null, rest?: Buffer): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (err) {
        reject(err);
        return;
      }
      if (rest && rest.length > 0) socket.unshift(rest);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) {
        if (received.length > MAX_CONNECT_HEAD) finish(new ProxyFailure('proxy answered badly'));
        return;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(received.toString('latin1', 0, 16))?.[1]);
      if (status >= 200 && status < 300) finish(null, received.subarray(end + 4));
      else if (status === 407) finish(new ProxyFailure('proxy authentication failed'));
      else if (Number.isInteger(status)) {
        finish(new ProxyFailure(`proxy refused the connection (HTTP ${status})`));
      } else finish(new ProxyFailure('proxy answered badly'));
    };
    const onError = (): void => finish(new ProxyFailure('proxy closed the connection'));
    const onClose = (): void => finish(new ProxyFailure('proxy closed the connection'));
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.write(head);
  });
}

async function socksConnect(
  ctx: ProxyContext,
  socket: Socket,
  address: ProxyAddress,
  target: { host: string; port: number },
): Promise<void> {
  try {
    await SocksClient.createConnection({
      command: 'connect',
      destination: target,
      proxy: {
        host: address.host,
        port: address.port,
        type: 5,
        ...(address.username === null
          ? {}
          : { userId: address.username, password: address.password ?? '' }),
      },
      existing_socket: socket,
      timeout: ctx.proxyTimeoutMs,
    });
  } catch (err) {
    const text = err instanceof Error ? err.message : '';
    if (/authentication/i.test(text)) throw new ProxyFailure('proxy authentication failed');
    if (/timed out/i.test(text)) throw timedOut();
    if (/rejected|failure/i.test(text)) throw new ProxyFailure('proxy refused the connection');
    throw new ProxyFailure('proxy closed the connection');
  }
}

const timedOut = (): ProxyFailure => new ProxyFailure('proxy timed out');

/** An upstream socket counted (the bound on upstreams) and forgotten when it closes. */
function track(ctx: ProxyContext, socket: Socket): void {
  ctx.upstreams.add(socket);
  socket.once('close', () => ctx.upstreams.delete(socket));
  socket.on('error', () => {});
}

/** A TLS failure's kind in words a user can act on (never the certificate's details). */
function tlsReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /CERT|SELF_SIGNED|VERIFY|ALTNAME/.test(code)) {
    return "its certificate is not trusted for the proxy's name";
  }
  return 'the proxy does not speak TLS, or closed the connection';
}
