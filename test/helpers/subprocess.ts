import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and gives back its exit code and everything it printed. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: options.env,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => {
      stdout += String(d);
    });
    child.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    // A bounded run: past `timeoutMs` the child is killed and its output so far is kept.
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            stderr += `\n[killed after ${options.timeoutMs} ms]\n`;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    // A command that cannot start (not installed) ends the run instead of hanging it.
    child.on('error', (err) => {
      stderr += `\n[${command} did not start: ${err.message}]\n`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
