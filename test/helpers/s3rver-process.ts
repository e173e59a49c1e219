/**
 * An S3-compatible server (s3rver) as a process of its own, so a test can freeze it (SIGSTOP)
 * without freezing itself: `node s3rver-process.ts <directory> <bucket>` prints its port.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface S3Process {
  pid: number;
  endpoint: string;
  bucket: string;
  /** S3_* settings for a node using it. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts s3rver in a child process on a free port, with one empty bucket. */
export async function startS3Process(): Promise<S3Process> {
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-s3-process-'));
  const bucket = `shots-${randomBytes(4).toString('hex')}`;
  const child = spawn(process.execPath, [import.meta.filename, dir, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += String(chunk);
      const match = /^port (\d+)$/m.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code})`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    pid: child.pid ?? 0,
    endpoint,
    bucket,
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    close: async () => {
      // Once ended (by a signal too: then exitCode stays null), there is nothing to wait for.
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] === import.meta.filename) {
  const [directory, bucket] = process.argv.slice(2);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket as string }],
  });
  const { port } = await server.run();
  process.stdout.write(`port ${port}\n`);
}
