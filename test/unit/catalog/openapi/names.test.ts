import { describe, expect, it } from 'vitest';
import {
  deriveToolName,
  normaliseName,
  snakeCase,
  uniqueName,
} from '../../../../core/catalog/openapi/names.js';
import { TOOL_NAME_PATTERN } from '../../../../core/catalog/types.js';

describe('tool names', () => {
  it('snake_cases operationIds', () => {
    expect(snakeCase('issues/create')).toBe('issues_create');
    expect(snakeCase('listPets')).toBe('list_pets');
    expect(snakeCase('getHTTPStatus')).toBe('get_http_status');
    expect(snakeCase('repos/get-content')).toBe('repos_get_content');
    expect(snakeCase('--a..b__c--')).toBe('a_b_c');
  });

  it('prefixes the provider id with - as _ and falls back to method and path', () => {
    expect(deriveToolName('github', { operationId: 'issues/create', method: 'POST', path: '/x' })).toBe(
      'github_issues_create',
    );
    expect(deriveToolName('slack-webhook', { method: 'GET', path: '/pets/{petId}' })).toBe(
      'slack_webhook_get_pets_pet_id',
    );
    expect(deriveToolName('x1', { operationId: '***', method: 'DELETE', path: '/' })).toBe('x1_delete');
  });

  it('shortens long names deterministically within 48 characters', () => {
    const op = {
      operationId: 'actions/add-custom-labels-to-self-hosted-runner-for-repo',
      method: 'POST',
      path: '/a',
    };
    const name = deriveToolName('github', op);
    expect(name).toBe(deriveToolName('github', op));
    expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(name).toMatch(/^github_actions_add_custom_labels_to_self_[0-9a-f]{6}$/);
    expect(deriveToolName('github', { ...op, path: '/b' })).not.toBe(name);
  });

  it('never collides: numbered suffixes for taken names', () => {
    expect(uniqueName('a_b', new Set(['a_b', 'a_b_2']))).toBe('a_b_3');
    const long = 'x'.repeat(48);
    expect(uniqueName(long, new Set([long]))).toBe(`${'x'.repeat(46)}_2`);
    expect(normaliseName('Linear-Get_Issue')).toBe(normaliseName('linear_get_issue'));
  });
});
