import { describe, expect, it } from 'vitest';
import { zendeskPlugin } from '../../../plugins/zendesk/index.js';
import { compiledTool, jsonResponse, shaperOf, textOf, textResponse } from './context.js';

const shape = shaperOf(
  zendeskPlugin,
  compiledTool({
    name: 'zendesk_update_ticket',
    provider: 'zendesk',
    source: 'PUT /tickets/{ticket_id}.json',
    description: 'Update a ticket.',
    category: 'tickets',
    method: 'PUT',
    path: '/tickets/{ticket_id}.json',
  }),
);

describe('zendesk shapeResponse', () => {
  it('lists the validation details of a 422', async () => {
    const result = await shape(
      jsonResponse(422, {
        error: 'RecordInvalid',
        description: 'Record validation errors',
        details: {
          base: [{ description: 'Subject: cannot be blank', error: 'BlankValue' }],
          requester: [{ error: 'InvalidValue' }],
        },
      }),
    );
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toBe(
      'zendesk returned HTTP 422 Unprocessable Entity: RecordInvalid: Record validation errors ' +
        '(Subject: cannot be blank; requester: InvalidValue).\n' +
        'Fix the arguments as the message says; a closed ticket cannot be updated at all.',
    );
  });

  it('names a missing record with its description', async () => {
    const result = await shape(jsonResponse(404, { error: 'RecordNotFound', description: 'Not found' }));
    expect(textOf(result)).toMatch(
      /^zendesk returned HTTP 404 Not Found: RecordNotFound: Not found\.\nCheck the ids/,
    );
  });

  it('keeps the default shaping for successes, other statuses and other shapes', async () => {
    expect(await shape(jsonResponse(200, { ticket: { id: 1 } }))).toBeUndefined();
    expect(await shape(jsonResponse(401, { error: "Couldn't authenticate you" }))).toBeUndefined();
    expect(
      await shape(jsonResponse(403, { error: { title: 'Forbidden', message: 'No access' } })),
    ).toBeUndefined();
    expect(await shape(textResponse(400, 'Bad request'))).toBeUndefined();
  });
});
