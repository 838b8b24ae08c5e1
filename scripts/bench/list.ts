/**
 * The tools/list section's load generator, in a process of its own (run.ts starts it on the load
 * generator's core): after the tools/call section's minutes of 32-client load, the bench's own
 * process answered a 1,000-tool list in 1.2-1.3 ms where a fresh client process, against the same
 * gateway at the same moment, took 0.46-0.72 ms; the client's state, not the gateway's, made the
 * difference. Its connections read into one buffer each (lib/static-read.ts), so its own garbage
 * collector is not measured either. Takes its plan as JSON (argv[2]: {@link ListPlan}); prints the rounds' windows as
 * JSON on its last line of stdout ({@link ListRounds}); progress goes to stderr.
 */
import type { ListPlan, ListRounds } from './lib/ipc.js';
import { ClientSet, interleave, runWindow } from './lib/load.js';
import { adopt } from './lib/proc.js';
import { listTarget } from './lib/targets.js';

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? '') as ListPlan;
  adopt(plan.benchPids);
  const sets = plan.lists.map(({ name, url, pid, key, query, transport, size }) => {
    const target = listTarget(url, pid, key, query, transport, size);
    return new ClientSet({ ...target, name });
  });
  try {
    process.stderr.write('tools/list: warming up\n');
    for (const set of sets) await runWindow(set, 1, plan.windowMs, 0);
    process.stderr.write(`tools/list: ${plan.rounds} interleaved rounds\n`);
    const rounds = await interleave(sets, plan.rounds, [1], () => plan.windowMs, plan.settleMs);
    const out: ListRounds = rounds.map((round) => Object.fromEntries(round));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await Promise.all(sets.map((set) => set.target.close()));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
