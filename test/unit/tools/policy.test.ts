import { describe, expect, it } from 'vitest';
import { entryMatches, ToolVisibility } from '../../../core/tools/policy.js';

const tool = (name: string, provider: string) => ({ name, provider });
const policy = (allow: string[] | null, deny: string[], surface: 'auto' | 'compact' | 'full' = 'auto') => ({
  allow,
  deny,
  surface,
});

describe('entryMatches', () => {
  it('names a tool or its provider, exactly or by a prefix ending in *', () => {
    const hit = tool('slack_webhook_send_message', 'slack-webhook');
    expect(entryMatches('slack-webhook', hit)).toBe(true);
    expect(entryMatches('slack_webhook_send_message', hit)).toBe(true);
    expect(entryMatches('slack_*', hit)).toBe(true);
    expect(entryMatches('slack-*', hit)).toBe(true);
    expect(entryMatches('*', hit)).toBe(true);
    expect(entryMatches('slack', hit)).toBe(false);
    expect(entryMatches('slack_webhook', hit)).toBe(false);
    expect(entryMatches('github_*', hit)).toBe(false);
  });
});

describe('ToolVisibility', () => {
  const create = tool('github_issues_create', 'github');
  const list = tool('github_issues_list_for_repo', 'github');
  const send = tool('sendgrid_send_email', 'sendgrid');

  it('shows everything without a policy, and an empty key for caches', () => {
    const none = new ToolVisibility([]);
    expect([create, list, send].every((t) => none.shows(t))).toBe(true);
    expect(none.key).toBe('');
    expect(none.surface).toBe('auto');
  });

  it('shows what the allow-list names and the deny-list does not', () => {
    const visibility = new ToolVisibility([policy(['github'], ['github_issues_create'])]);
    expect(visibility.shows(list)).toBe(true);
    expect(visibility.shows(create)).toBe(false);
    expect(visibility.shows(send)).toBe(false);
  });

  it("narrows a client's policy by its organization's: every policy must let the tool through", () => {
    const visibility = new ToolVisibility([policy(null, ['sendgrid']), policy(['github_issues_list_*'], [])]);
    expect(visibility.shows(list)).toBe(true);
    expect(visibility.shows(create)).toBe(false);
    expect(visibility.shows(send)).toBe(false);
  });

  it("takes the organization's surface unless it is auto", () => {
    expect(new ToolVisibility([policy(null, [], 'full'), policy(null, [], 'compact')]).surface).toBe(
      'compact',
    );
    expect(new ToolVisibility([policy(null, [], 'full'), policy(null, [], 'auto')]).surface).toBe('full');
  });

  it('keys caches by what is hidden, not by the surface', () => {
    expect(new ToolVisibility([policy(null, [], 'full')]).key).toBe('');
    expect(new ToolVisibility([policy(['github'], [])]).key).not.toBe(
      new ToolVisibility([policy(null, ['github'])]).key,
    );
  });
});
