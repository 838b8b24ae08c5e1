import { describe, expect, it } from 'vitest';
import { ACCESSIBLE_RESOURCES_URL, jiraPlugin } from '../../../plugins/jira/index.js';
import { fakeContext, jsonResponse } from './context.js';

const JIRA_SCOPES = ['read:jira-work', 'write:jira-work', 'read:jira-user'];
const site = (id: string, name: string, scopes = JIRA_SCOPES) => ({
  id,
  name,
  url: `https://${name}.atlassian.net`,
  scopes,
  avatarUrl: '',
});

describe('jira plugin: the site after consent', () => {
  it('asks accessible-resources with the new token and takes the only Jira site', async () => {
    const { ctx, requests } = fakeContext(
      'jira',
      jsonResponse(200, [
        site('1324a887-45db-1bf4-1e99-ef0ff456d421', 'acme'),
        site('ffffffff-0000-0000-0000-000000000000', 'wiki', ['read:confluence-content.all']),
      ]),
    );
    await expect(jiraPlugin.discoverFields!(ctx)).resolves.toEqual({
      cloud_id: '1324a887-45db-1bf4-1e99-ef0ff456d421',
    });
    expect(requests).toEqual([{ method: 'GET', path: '', url: ACCESSIBLE_RESOURCES_URL }]);
  });

  it('with several Jira sites, keeps the one the user named, else asks which', async () => {
    const sites = [
      site('11111111-1111-1111-1111-111111111111', 'acme'),
      site('22222222-2222-2222-2222-222222222222', 'acme-eu'),
    ];
    const named = fakeContext('jira', jsonResponse(200, sites));
    named.ctx.fields = { cloud_id: '22222222-2222-2222-2222-222222222222' };
    await expect(jiraPlugin.discoverFields!(named.ctx)).resolves.toEqual({
      cloud_id: '22222222-2222-2222-2222-222222222222',
    });
    const unnamed = fakeContext('jira', jsonResponse(200, sites));
    await expect(jiraPlugin.discoverFields!(unnamed.ctx)).rejects.toThrow(
      /several Jira sites: acme \(11111111-1111-1111-1111-111111111111\), acme-eu \(22222222-.*fields\.cloud_id/,
    );
  });

  it('says so when the account has no Jira site or the list cannot be read', async () => {
    await expect(jiraPlugin.discoverFields!(fakeContext('jira', jsonResponse(200, [])).ctx)).rejects.toThrow(
      /no Jira site/,
    );
    await expect(
      jiraPlugin.discoverFields!(fakeContext('jira', jsonResponse(401, { message: 'Unauthorized' })).ctx),
    ).rejects.toThrow(/HTTP 401/);
  });
});
