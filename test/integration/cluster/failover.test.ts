import { EventEmitter, once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, type ClusterProcess } from '../../helpers/cluster.js';
import { connect, type Generation, type TestClient } from '../../helpers/clients.js';
import { until } from '../../helpers/gateway.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';
import { requireRedis } from '../../helpers/redis.js';
import type { Served } from '../../helpers/round-robin.js';
import { expectToolOk } from '../../helpers/results.js';

const FILE = 'test/integration/cluster/failover.test.ts';
/** Pet Shop API keys and the account each belongs to. */
const LOAD_KEY = 'ps_load';
const OLD_KEY = 'ps_old';
const NEW_KEY = 'ps_new';
/** The key of the connect in flight when its process is killed: the API kills it on seeing the key. */
const KILL_KEY = 'ps_kill';
const ACCOUNTS: Record<string, string> = {
  [LOAD_KEY]: 'load@example.com',
  [OLD_KEY]: 'old@example.com',
  [NEW_KEY]: 'new@example.com',
  [KILL_KEY]: 'kim@example.com',
};
/** How many calls the load makes before the kill, and after it. */
const CALLS_EACH_SIDE = 40;

// Three `toolgate serve` processes on one PostgreSQL database and one Redis, behind a round-robin
// balancer that leaves out a backend refusing connections (test/helpers/round-robin.ts), and one
// of them killed with SIGKILL under load: what the other two serve, what a session whose stream
// was on the killed one sees, and what the store holds afterwards.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let api: Receiver;
let cluster: Cluster;
let key: string;
const clients: TestClient[] = [];
/** Ends the load's loops (also when the test failed half-way). */
let loadStopped = false;
/** The process the Pet Shop API kills when a request with KILL_KEY reaches it. */
let victim: { process: ClusterProcess; killedAt: number } | undefined;

beforeAll(async () => {
  api = await startReceiver((req) => {
    const presented = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (presented === KILL_KEY && victim && victim.killedAt === 0) {
      victim.killedAt = Date.now();
      victim.process.child.kill('SIGKILL');
    }
    const email = ACCOUNTS[presented];
    return email
      ? jsonAnswer(200, { email, items: [{ id: 'p1', name: 'Rex' }] })
      : jsonAnswer(401, { message: 'invalid api key' });
  });
  cluster = await startCluster(3, api.url);
  const created = await cluster.cli(['keys', 'create', '--client', 'acme', '--type', 'client']);
  expect(created.code, created.stderr).toBe(0);
  key = /^(toolgate_\w+)$/m.exec(created.stdout)![1]!;
}, 120_000);

afterAll(async () => {
  loadStopped = true;
  for (const client of clients) await client.close().catch(() => {});
  await cluster?.close();
  await api?.close();
});

/** A client of `userId` through the balancer, or straight to one process when `base` says so. */
const open = async (
  generation: Generation,
  userId: string,
  base = cluster.balancer.url,
): Promise<TestClient> => {
  const client = await connect(generation, new URL(`${base}/mcp/?user_id=${userId}`), { 'x-api-key': key });
  clients.push(client);
  return client;
};

const connectPetshop = (client: TestClient, apiKey: string) =>
  client.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: apiKey } });

/** The request the Pet Shop API received last: which key a process sent. */
const lastKeySeen = (): string | undefined => api.received.at(-1)?.headers.authorization;

describe('a change made through one process', () => {
  it('a reconnect with other credentials through one process is used by the others on their next call', async () => {
    const [first, ...others] = await Promise.all(
      cluster.processes.map((p) => open('2026-07-28', 'rita', p.url)),
    );
    expectToolOk(await connectPetshop(first!, OLD_KEY), 'old@example.com');
    // Every process has used (and opened) the old credentials.
    for (const client of [first!, ...others]) {
      expectToolOk(await client.callTool('petshop_whoami'), 'old@example.com');
      expect(lastKeySeen()).toBe(`Bearer ${OLD_KEY}`);
    }
    expectToolOk(await connectPetshop(first!, NEW_KEY), 'new@example.com');
    for (const client of others) {
      expectToolOk(await client.callTool('petshop_whoami'), 'new@example.com');
      expect(lastKeySeen()).toBe(`Bearer ${NEW_KEY}`);
    }
  });
});

/** One call of the load: when it was sent and answered, and whether it succeeded. */
interface Attempt {
  user: string;
  start: number;
  end: number;
  ok: boolean;
  detail: string;
}

/** Announces each attempt of the load as it ends. */
const progress = new EventEmitter();

/**
 * Makes one call of the load and records it in `log`: succeeded when the result is not an error
 * and holds `expected`; a call that throws (the balancer answered 502) failed.
 */
async function attempt(
  log: Attempt[],
  user: string,
  call: () => Promise<{ isError?: boolean; content: { text?: string }[] }>,
  expected: string,
): Promise<void> {
  const start = Date.now();
  let ok = false;
  let detail: string;
  try {
    const result = await call();
    detail = result.content[0]?.text ?? '';
    ok = !result.isError && detail.includes(expected);
  } catch (error) {
    detail = String(error);
  }
  log.push({ user, start, end: Date.now(), ok, detail });
  progress.emit('attempt');
  // A call that fails without I/O must not keep the event loop from timers and sockets.
  await new Promise((resolve) => setImmediate(resolve));
}

/** What a fresh client of `userId` finds: 'connected' (and it works) or 'no connection'. */
async function petshopStateOf(userId: string): Promise<string> {
  const client = await open('2026-07-28', userId);
  const state = /State here: (connected|no connection|re-approval needed)\b/.exec(
    expectToolOk(await client.callTool('inspect_provider', { provider: 'petshop' })),
  )?.[1];
  const tools = await client.listToolNames();
  if (state === 'connected') {
    expect(tools).toContain('petshop_list_pets');
    expectToolOk(await client.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
  } else {
    expect(tools).not.toContain('petshop_list_pets');
  }
  return state ?? 'unreadable';
}

describe('one process killed with SIGKILL under load', () => {
  // One kill, set up and made by the first test; the others look at what it left.
  const loadUsers = ['u0', 'u1', 'u2', 'u3'];
  const calls: Attempt[] = [];
  const connects: Attempt[] = [];
  let session: TestClient;
  let sessionId: string;
  let killed: ClusterProcess;
  let survivors: ClusterProcess[];
  let kimOutcome: { ok: boolean; detail: string };
  /** Indexes into the balancer's record, and times: when the API killed the process, when it had exited. */
  let servedAtExit: number;
  let killedAt: number;
  let exitedAt: number;

  it('the other two serve on: only calls in flight on the killed process fail', async () => {
    const { balancer } = cluster;
    // A 2025 session (the v2 client opens its GET stream itself): the process serving its stream
    // is the one to kill.
    const from = balancer.served.length;
    session = await open('2025 (v2 client)', 'sam');
    await until(balancer.events, 'served', () =>
      balancer.served.slice(from).some((s) => s.method === 'GET' && s.status === 200),
    );
    const stream = balancer.served.slice(from).find((s) => s.method === 'GET' && s.status === 200)!;
    sessionId = stream.session!;
    expect(sessionId).toBeTruthy();
    killed = cluster.processes.find((p) => p.url === stream.backend)!;
    survivors = cluster.processes.filter((p) => p !== killed);

    // Connections made before the load.
    const loadClients = await Promise.all(loadUsers.map((user) => open('2026-07-28', user)));
    for (const client of loadClients) expectToolOk(await connectPetshop(client, LOAD_KEY));
    // The connect that is in flight on the process when it dies: sent to it straight.
    const kim = await open('2026-07-28', 'kim', killed.url);

    // The load: four clients calling a provider tool, the session calling a system tool, and a
    // stream of connects by new users (each a new client), all through the balancer.
    const loops = [
      ...loadClients.map(async (client, i) => {
        while (!loadStopped)
          await attempt(
            calls,
            loadUsers[i]!,
            () => client.callTool('petshop_list_pets', { limit: 1 }),
            'Rex',
          );
      }),
      (async () => {
        while (!loadStopped)
          await attempt(calls, 'sam', () => session.callTool('list_providers'), 'Pet Shop');
      })(),
      (async () => {
        for (let n = 0; !loadStopped; n++) {
          const user = `c${n}`;
          await attempt(
            connects,
            user,
            async () => connectPetshop(await open('2026-07-28', user), LOAD_KEY),
            'load@example.com',
          );
        }
      })(),
    ];
    const succeeded = (attempts: Attempt[], after = 0): number =>
      attempts.filter((a) => a.ok && a.start > after).length;
    await until(progress, 'attempt', () => succeeded(calls) >= CALLS_EACH_SIDE && succeeded(connects) >= 3);

    // Kill: the Pet Shop API kills the process when kim's connect asks it to check the key.
    victim = { process: killed, killedAt: 0 };
    const exited = once(killed.child, 'exit');
    const kimStart = Date.now();
    kimOutcome = await connectPetshop(kim, KILL_KEY).then(
      (result) => ({ ok: !result.isError, detail: result.content[0]?.text ?? '' }),
      (error: unknown) => ({ ok: false, detail: String(error) }),
    );
    await exited;
    exitedAt = Date.now();
    servedAtExit = balancer.served.length;
    killedAt = victim.killedAt;
    expect(killedAt).toBeGreaterThanOrEqual(kimStart);
    expect(killed.child.signalCode).toBe('SIGKILL');

    await until(
      progress,
      'attempt',
      () => succeeded(calls, exitedAt) >= CALLS_EACH_SIDE && succeeded(connects, exitedAt) >= 3,
    );
    loadStopped = true;
    await Promise.all(loops);

    // A call may fail only if it was in flight when the process died (sent before it had exited,
    // answered after the kill), at most one per loop; every other succeeded.
    const inFlightAtKill = (a: Attempt) => a.start <= exitedAt && a.end >= killedAt;
    for (const made of [...calls, ...connects])
      if (!inFlightAtKill(made)) expect(made, made.detail).toMatchObject({ ok: true });
    expect([...calls, ...connects].filter((a) => !a.ok).length).toBeLessThanOrEqual(loops.length);
    // Since it exited, the balancer has left it out: the other two answered everything.
    const servedAfterExit = balancer.served.slice(servedAtExit);
    expect(new Set(servedAfterExit.map((s) => s.backend))).toEqual(new Set(survivors.map((p) => p.url)));
    expect(balancer.failed.some((f) => f.backend === killed.url)).toBe(true);
  });

  it('a 2025 session whose stream was on the killed process reopens it on another, keeps its session and hears changes', async () => {
    const { balancer } = cluster;
    // The stream was cut with its process; the client opens it again (after its reconnection
    // delay), for the same session, and the balancer sends it to a survivor.
    const reopening = (s: Served) => s.method === 'GET' && s.status === 200 && s.session === sessionId;
    await until(balancer.events, 'served', () => balancer.served.slice(servedAtExit).some(reopening));
    const reopened = balancer.served.slice(servedAtExit).find(reopening)!;
    expect(survivors.map((p) => p.url)).toContain(reopened.backend);
    // Its POSTs since the kill were all answered, on both survivors, under the same session id.
    const posts = balancer.served
      .slice(servedAtExit)
      .filter((s) => s.session === sessionId && s.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((s) => s.status === 200)).toBe(true);
    expectToolOk(await session.callTool('list_providers'), 'Pet Shop');
    // Its stream hears a connection made through the survivor that does not hold it.
    const changed = new Promise<void>((resolve) => void session.watchToolsChanged(resolve));
    const third = survivors.find((p) => p.url !== reopened.backend)!;
    expectToolOk(await connectPetshop(await open('2026-07-28', 'sam', third.url), LOAD_KEY));
    await changed;
    expect(await session.listToolNames()).toContain('petshop_list_pets');
    expectToolOk(await session.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
  });

  it('the store keeps every connection made before and during the load, and holds nothing half-written', async () => {
    // From fresh clients: every connection made before or during the load is there and works; a
    // connect that failed (kim's, cut by the kill, and any other in flight then) is either wholly
    // there and working, or absent. Never one that is listed but does not work.
    const states = new Map<string, string>();
    for (const user of [...loadUsers, ...new Set(connects.map((c) => c.user)), 'kim'])
      states.set(user, await petshopStateOf(user));
    for (const user of loadUsers) expect(states.get(user), user).toBe('connected');
    for (const made of connects) if (made.ok) expect(states.get(made.user), made.user).toBe('connected');
    for (const [user, state] of states) expect(['connected', 'no connection'], user).toContain(state);
    if (kimOutcome.ok) expect(states.get('kim')).toBe('connected');
    // In the database: one whole row for each connected user, none for the others.
    const rows = await cluster.database.query<{ user_id: string; state: string; sealed: number }>(
      `SELECT s.user_id, c.state, length(c.credentials) AS sealed FROM connections c
       JOIN scopes s ON s.id = c.scope_id WHERE c.provider = 'petshop'`,
    );
    const connected = [...states].filter(([, state]) => state === 'connected').map(([user]) => user);
    expect(rows.map((r) => r.user_id).sort()).toEqual([...connected, 'rita', 'sam'].sort());
    for (const row of rows) {
      expect(row.state).toBe('connected');
      expect(row.sealed).toBeGreaterThan(0);
    }
  });
});
