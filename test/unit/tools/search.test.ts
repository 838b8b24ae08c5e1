import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, type CatalogSnapshot, type ProviderEntry } from '../../../core/catalog/index.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { SearchFilterError, stem, terms, ToolIndex } from '../../../core/tools/search.js';
import { PLUGINS } from '../../../plugins/index.js';

let bundled: CatalogSnapshot;

beforeAll(async () => {
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  ({ snapshot: bundled } = await buildCatalog({ dir: 'manifests', registry }));
});

/** The bundled catalog with each provider's `synonyms` replaced (a new snapshot, hence a new index). */
function withSynonyms(change: (provider: ProviderEntry) => string[][] | undefined): CatalogSnapshot {
  const providers = new Map(
    [...bundled.providers].map(([id, provider]): [string, ProviderEntry] => {
      const entry = { ...provider };
      const synonyms = change(provider);
      if (synonyms) entry.synonyms = synonyms;
      else delete entry.synonyms;
      return [id, entry];
    }),
  );
  return { ...bundled, providers };
}

const names = (snapshot: CatalogSnapshot, query: string, limit = 5): string[] =>
  ToolIndex.of(snapshot)
    .search(query, { limit })
    .map((hit) => hit.tool.name);

describe('terms', () => {
  it('makes the forms of a word meet', () => {
    for (const forms of [
      ['issue', 'issues'],
      ['create', 'creates', 'created', 'creating'],
      ['reply', 'replies', 'replied'],
      ['address', 'addresses'],
      ['message', 'messages', 'messaging'],
      ['tag', 'tags', 'tagged', 'tagging'],
    ]) {
      expect(new Set(forms.map(stem)), forms.join(', ')).toHaveLength(1);
    }
    expect(stem('status')).toBe('status');
  });

  it('splits identifiers and case changes, drops stop words and accents', () => {
    expect(terms('List the PRs of calendarId in the Café')).toEqual(['list', 'pr', 'calendar', 'id', 'caf']);
  });
});

describe('ToolIndex over the bundled catalog', () => {
  it('finds the tool a request names in words, best first', () => {
    // Square and Stripe both refund payments; naming the provider picks one (next test).
    expect(names(bundled, 'refund a payment', 2).sort()).toEqual([
      'square_refund_payment',
      'stripe_create_refund',
    ]);
    expect(names(bundled, 'cancel the meeting', 1)).toEqual(['google_calendar_delete_event']);
    // Email senders rank first (Postmark's two tools, then SendGrid's and Gmail's).
    expect(names(bundled, 'send an email', 4).sort()).toEqual([
      'gmail_send_message',
      'postmark_send_email',
      'postmark_send_email_with_template',
      'sendgrid_send_email',
    ]);
    expect(names(bundled, 'open a ticket in jira', 3)).toContain('jira_create_issue');
  });

  it('prefers the tools of a provider the request names', () => {
    expect(names(bundled, 'send a message on slack', 2)).toEqual([
      'slack_webhook_send_message',
      'slack_post_message',
    ]);
    expect(names(bundled, 'send a message on discord', 1)).toEqual(['discord_webhook_send_message']);
    expect(names(bundled, 'refund a stripe payment', 1)).toEqual(['stripe_create_refund']);
  });

  it('forgives typos and unfinished words', () => {
    expect(names(bundled, 'list my calender events', 1)).toEqual(['google_calendar_list_events']);
    expect(names(bundled, 'stripe invoi')).toEqual(expect.arrayContaining(['stripe_create_invoice']));
  });

  it('answers the same hits in the same order every time', () => {
    const index = ToolIndex.of(bundled);
    const first = index.search('list things', { limit: 20 });
    expect(index.search('list things', { limit: 20 })).toEqual(first);
    for (let i = 1; i < first.length; i++)
      expect(first[i - 1]!.score).toBeGreaterThanOrEqual(first[i]!.score);
  });

  it('returns at most `limit` hits, 8 by default, and none for words it does not know', () => {
    expect(ToolIndex.of(bundled).search('list')).toHaveLength(8);
    expect(ToolIndex.of(bundled).search('list', { limit: 20 })).toHaveLength(20);
    expect(ToolIndex.of(bundled).search('zzyzx qwv')).toEqual([]);
    expect(ToolIndex.of(bundled).search('the of and')).toEqual([]);
  });

  it('is built once per snapshot', () => {
    expect(ToolIndex.of(bundled)).toBe(ToolIndex.of(bundled));
    expect(ToolIndex.of({ ...bundled })).not.toBe(ToolIndex.of(bundled));
  });
});

describe('filters', () => {
  it('keep the tools of one provider, or of one category by id or title', () => {
    const index = ToolIndex.of(bundled);
    const github = index.search('list', { provider: 'github', limit: 20 });
    expect(github.length).toBeGreaterThan(0);
    expect(github.every((hit) => hit.provider.id === 'github')).toBe(true);
    const byId = index.search('create', { provider: 'github', category: 'pull_requests' });
    const byTitle = index.search('create', { provider: 'github', category: 'pull requests' });
    expect(byId[0]?.tool.name).toBe('github_pulls_create');
    expect(byId.every((hit) => hit.tool.category === 'pull_requests')).toBe(true);
    expect(byTitle).toEqual(byId);
    const issues = index.search('create', { category: 'issues', limit: 20 });
    expect(new Set(issues.map((hit) => hit.provider.id))).toEqual(new Set(['github', 'jira', 'linear']));
  });

  it('name the valid values when they match nothing', () => {
    const index = ToolIndex.of(bundled);
    expect(() => index.search('x', { provider: 'gitlab' })).toThrow(SearchFilterError);
    expect(() => index.search('x', { provider: 'gitlab' })).toThrow(
      /Valid providers: airtable, apify, .*, zendesk, zoom\./,
    );
    expect(() => index.search('x', { provider: 'stripe', category: 'refunds' })).toThrow(
      'No category "refunds" in Stripe. Valid categories: customers (Customers), payments (Payments), invoices (Invoices), balance (Balance).',
    );
    expect(() => index.search('x', { category: 'refunds' })).toThrow(
      /^No category "refunds"\. Valid categories: account, act, .*, workspace, write\.$/,
    );
  });
});

describe('synonyms', () => {
  it("of a manifest find that provider's tools, and only those", () => {
    const gizmo = withSynonyms((p) => (p.id === 'jira' ? [['gizmo', 'issue']] : p.synonyms));
    expect(names(bundled, 'gizmo')).toEqual([]);
    const found = ToolIndex.of(gizmo).search('gizmo', { limit: 20 });
    expect(found.length).toBeGreaterThan(0);
    expect(new Set(found.map((hit) => hit.provider.id))).toEqual(new Set(['jira']));
    expect(names(gizmo, 'create a gizmo', 1)).toEqual(['jira_create_issue']);
  });

  it('may be phrases', () => {
    const ping = withSynonyms((p) => (p.id === 'teams-webhook' ? [['post', 'ping the team']] : undefined));
    expect(names(bundled, 'ping the team', 2).every((name) => name.startsWith('teams_webhook_'))).toBe(false);
    expect(names(ping, 'ping the team', 2).every((name) => name.startsWith('teams_webhook_'))).toBe(true);
  });

  it('built in work without any manifest declaring them', () => {
    const none = withSynonyms(() => undefined);
    // No tool says "appointment" or "remove": the built-in groups bring "event" and "delete".
    expect(names(none, 'remove an appointment', 3)).toContain('google_calendar_delete_event');
  });
});

describe('speed', () => {
  it('answers a search in well under 2 ms (median) on the bundled catalog', () => {
    const index = ToolIndex.of(bundled);
    const queries = [
      'send an email to ana about the invoice',
      'open a jira ticket for the login bug',
      'what meetings do I have tomorrow',
      'share the budget spreadsheet with kim',
      'refund the last payment of acme corp',
      'post the release notes in #general on slack',
    ];
    const times: number[] = [];
    for (let round = 0; round < 30; round++) {
      for (const query of queries) {
        const start = performance.now();
        index.search(query);
        times.push(performance.now() - start);
      }
    }
    times.sort((a, b) => a - b);
    expect(times[times.length >> 1]).toBeLessThan(2);
  });
});
