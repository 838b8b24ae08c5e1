import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../scripts/toolgate.ts', import.meta.url));

/** Starts the real `toolgate` command (from source, through tsx) with the given environment. */
export function spawnToolgate(
  args: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
}

/** Runs `toolgate ...` to completion, with `input` on its standard input when given. */
export function runToolgate(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnToolgate(args, env, input === undefined ? 'ignore' : 'pipe');
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
