import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../helpers/clients.js';
import { startGateway, until, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver } from '../../helpers/receiver.js';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tg: TestGateway;
let failNext = false;

beforeAll(async () => {
  receiver = await startReceiver(() => (failNext ? { status: 500, body: 'down' } : { status: 204 }));
  tg = await startGateway({ TOOLGATE_REPORT_WEBHOOK_URL: `${receiver.url}/hooks/toolgate` });
});
afterAll(async () => {
  await tg.close();
  await receiver.close();
});

describe('report_problem', () => {
  it("stores the report in the caller's scope, POSTs it to the operator's webhook, and tells the agent its id", async () => {
    const { key } = await tg.key('platform', 'acme-platform');
    const client = await connect('2026-07-28', tg.mcpUrl('?org_id=org-7&user_id=jane'), { 'X-API-Key': key });
    const result = await client.callTool('report_problem', {
      summary: 'github_issues_create returns 422',
      details: 'Tried to open an issue with labels.',
      provider: 'github',
      tool: 'github_issues_create',
    });
    await client.close();
    const id = /rep_[0-9a-f]{16}/.exec(result.content[0]!.text!)![0];

    const delivered = await receiver.next();
    expect(delivered.method).toBe('POST');
    expect(delivered.url).toBe('/hooks/toolgate');
    expect(delivered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(delivered.body)).toMatchObject({
      type: 'problem_report',
      id,
      summary: 'github_issues_create returns 422',
      details: 'Tried to open an issue with labels.',
      provider: 'github',
      tool: 'github_issues_create',
      client: 'acme-platform',
      org_id: 'org-7',
      user_id: 'jane',
    });
    expect(delivered.body).not.toContain(key);
    expect(JSON.stringify(delivered.headers)).not.toContain(key);

    const [stored] = await tg.gateway.store.reports.list({ status: 'open' });
    expect(stored).toMatchObject({ id, scope: { orgId: 'org-7', userId: 'jane' } });
  });

  it('still files the report when the webhook fails, and logs the failure for the operator', async () => {
    failNext = true;
    const { key } = await tg.key('solo');
    const client = await connect('2025 (v1 client)', tg.mcpUrl(), { 'X-API-Key': key });
    const result = await client.callTool('report_problem', { summary: 'webhook down' });
    await client.close();
    expect(result.isError).toBeFalsy();
    expect((await receiver.next()).body).toContain('webhook down');
    const failure = (): string | undefined => tg.logs.find((l) => l.includes('TG_REPORT_WEBHOOK_FAILED'));
    await until(tg.logEvents, 'line', () => failure() !== undefined);
    expect(failure()).toContain('HTTP 500');
  });
});
