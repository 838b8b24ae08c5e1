import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../scripts/toolgate.ts', import.meta.url));

/**
 * Starts the real `toolgate` command (from source, through tsx) with the given environment;
 * `detached`: as the leader of a process group of its own, as `npm start` or a supervisor runs it,
 * so that a test can signal the group; `through`: a command that runs it (e.g. `taskset -c 0`).
 */
export function spawnToolgate(
  args: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe' = 'ignore',
  detached = false,
  through: readonly string[] = [],
): ChildProcess {
  const [command, ...before] = [...through, process.execPath];
  return spawn(command, [...before, '--import', 'tsx', ENTRY, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
    detached,
  });
}

/**
 * Runs `toolgate ...` to completion, with `input` on its standard input when given, `through` a
 * command that runs it when given (spawnToolgate).
 */
export function runToolgate(
  args: string[],
  env: Record<string, string>,
  input?: string,
  through: readonly string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnToolgate(args, env, input === undefined ? 'ignore' : 'pipe', false, through);
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A running `toolgate serve`. */
export interface Serving {
  child: ChildProcess;
  /** Everything it printed so far, standard output and error. */
  output(): string;
  /** SIGTERM, then its exit code once it exited. */
  stop(): Promise<number | null>;
}

/**
 * Starts `toolgate serve` and resolves once it listens (its "Server listening at" log line, so
 * TOOLGATE_LOG_LEVEL must let info through); rejects, killing it, if it exits or has not listened
 * within 30 s.
 */
export async function startServe(env: Record<string, string>, detached = false): Promise<Serving> {
  const child = spawnToolgate(['serve'], env, 'ignore', detached);
  let output = '';
  const collect = (chunk: Buffer): void => void (output += chunk.toString());
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', () => output.includes('Server listening at') && resolve());
      child.on('exit', (code) => reject(new Error(`toolgate serve exited with ${code}:\n${output}`)));
      setTimeout(
        () => reject(new Error(`toolgate serve did not listen within 30 s:\n${output}`)),
        30_000,
      ).unref();
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}
