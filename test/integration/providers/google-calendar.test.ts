import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { googleNotFound, googleRateLimited, useGoogleApi } from './google.js';
import { jsonAnswer, type Answer } from './helpers.js';

const TOKEN = 'ya29.a0AfB_byC1calendarTestToken0123456789abcdef';
const TEAM = 'c_8f1f0d2e3a4b5c6d@group.calendar.google.com';
const TEAM_EVENTS = `/calendar/v3/calendars/${encodeURIComponent(TEAM)}/events`;

const standup = {
  kind: 'calendar#event',
  etag: '"3466732163906000"',
  id: '7kq2mp3c9d1h0s3vq5m8l2n4bo_20250311T090000Z',
  status: 'confirmed',
  htmlLink: 'https://www.google.com/calendar/event?eid=N2txMm1wM2M5ZDFoMHMzdnE1bThsMm40Ym8',
  created: '2025-01-06T10:12:41.000Z',
  updated: '2025-01-06T10:14:41.953Z',
  summary: 'Team standup',
  location: 'Room 4',
  creator: { email: 'ana@example.com', self: true },
  organizer: { email: 'ana@example.com', self: true },
  start: { dateTime: '2025-03-11T10:00:00+01:00', timeZone: 'Europe/Berlin' },
  end: { dateTime: '2025-03-11T10:15:00+01:00', timeZone: 'Europe/Berlin' },
  recurringEventId: '7kq2mp3c9d1h0s3vq5m8l2n4bo',
  attendees: [{ email: 'bob@example.com', responseStatus: 'accepted' }],
  hangoutLink: 'https://meet.google.com/abc-defg-hij',
  reminders: { useDefault: true },
  eventType: 'default',
};

/** A loopback Calendar API v3 (behind googleApi: bearer token, Google's error shape). */
function calendar(req: Received): Answer | undefined {
  switch (`${req.method} ${req.url}`) {
    case 'GET /calendar/v3/calendars/primary/events?timeMin=2025-03-10T00%3A00%3A00Z&timeMax=2025-03-15T00%3A00%3A00Z&q=standup&singleEvents=true&orderBy=startTime':
      return jsonAnswer(200, {
        kind: 'calendar#events',
        summary: 'ana@example.com',
        timeZone: 'Europe/Berlin',
        updated: '2025-03-09T08:00:00.000Z',
        accessRole: 'owner',
        defaultReminders: [{ method: 'popup', minutes: 10 }],
        items: [standup],
      });
    case `POST ${TEAM_EVENTS}?sendUpdates=all&conferenceDataVersion=1`:
      return jsonAnswer(200, { ...standup, id: 'q1b2c3d4e5f6g7h8', summary: 'Design review' });
    case `PATCH ${TEAM_EVENTS}/q1b2c3d4e5f6g7h8?sendUpdates=externalOnly`:
      return jsonAnswer(200, { ...standup, id: 'q1b2c3d4e5f6g7h8', summary: 'Design review (moved)' });
    case `DELETE ${TEAM_EVENTS}/q1b2c3d4e5f6g7h8?sendUpdates=none`:
      return { status: 204 };
    case 'POST /calendar/v3/calendars/primary/events/quickAdd?text=Lunch%20with%20Ana%20tomorrow%2012%3A30':
      return jsonAnswer(200, { ...standup, id: 'l9u8n7c6h5', summary: 'Lunch with Ana' });
    case 'POST /calendar/v3/freeBusy':
      return jsonAnswer(200, {
        kind: 'calendar#freeBusy',
        timeMin: '2025-03-11T08:00:00.000Z',
        timeMax: '2025-03-11T17:00:00.000Z',
        calendars: {
          primary: { busy: [{ start: '2025-03-11T09:00:00Z', end: '2025-03-11T09:15:00Z' }] },
          'nobody@example.com': { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] },
        },
      });
    case 'GET /calendar/v3/calendars/primary/events/nosuchevent':
      return googleNotFound('Not Found');
    case 'GET /calendar/v3/users/me/calendarList':
      return googleRateLimited('Rate Limit Exceeded', 30);
  }
}

const gcal = useGoogleApi({
  provider: 'google-calendar',
  accessToken: TOKEN,
  account: 'ana@example.com',
  basePath: '/calendar/v3',
  route: calendar,
});

describe('Google Calendar over /mcp/ with a seeded OAuth connection', () => {
  it('lists events of the primary calendar, expanded and ordered by start time by default', async () => {
    await gcal.expectCall({
      tool: 'google_calendar_list_events',
      args: { timeMin: '2025-03-10T00:00:00Z', timeMax: '2025-03-15T00:00:00Z', q: 'standup' },
      ok: '"hangoutLink":"https://meet.google.com/abc-defg-hij"',
      sent: {
        method: 'GET',
        url: '/calendar/v3/calendars/primary/events?timeMin=2025-03-10T00%3A00%3A00Z&timeMax=2025-03-15T00%3A00%3A00Z&q=standup&singleEvents=true&orderBy=startTime',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: '',
      },
    });
  });

  it('creates an event with a Meet link: query parameters in the URL, the event as the JSON body', async () => {
    const event = {
      summary: 'Design review',
      start: { dateTime: '2025-03-12T14:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2025-03-12T15:00:00', timeZone: 'Europe/Berlin' },
      attendees: [{ email: 'bob@example.com' }, { email: 'cy@example.org', optional: true }],
      conferenceData: {
        createRequest: { requestId: 'design-review-0312', conferenceSolutionKey: { type: 'hangoutsMeet' } },
      },
    };
    await gcal.expectCall({
      tool: 'google_calendar_create_event',
      args: { calendarId: TEAM, ...event, sendUpdates: 'all', conferenceDataVersion: 1 },
      ok: '"id":"q1b2c3d4e5f6g7h8"',
      sent: {
        method: 'POST',
        url: `/calendar/v3/calendars/c_8f1f0d2e3a4b5c6d%40group.calendar.google.com/events?sendUpdates=all&conferenceDataVersion=1`,
        headers: { 'content-type': 'application/json' },
        json: event,
      },
    });
  });

  it('patches only the fields given, and deletes with a 204', async () => {
    const event = { calendarId: TEAM, eventId: 'q1b2c3d4e5f6g7h8' };
    await gcal.expectCall({
      tool: 'google_calendar_update_event',
      args: { ...event, summary: 'Design review (moved)', sendUpdates: 'externalOnly' },
      ok: true,
      sent: {
        method: 'PATCH',
        url: `${TEAM_EVENTS}/q1b2c3d4e5f6g7h8?sendUpdates=externalOnly`,
        json: { summary: 'Design review (moved)' },
      },
    });
    const deleted = await gcal.call('google_calendar_delete_event', { ...event, sendUpdates: 'none' });
    expect(deleted).toMatchObject({ content: [{ type: 'text', text: 'Done (HTTP 204).' }] });
    gcal.expectSent({ method: 'DELETE', url: `${TEAM_EVENTS}/q1b2c3d4e5f6g7h8?sendUpdates=none`, body: '' });
  });

  it('quick-adds from text sent as a query parameter, with no body', async () => {
    await gcal.expectCall({
      tool: 'google_calendar_quick_add_event',
      args: { text: 'Lunch with Ana tomorrow 12:30' },
      ok: true,
      sent: {
        method: 'POST',
        url: '/calendar/v3/calendars/primary/events/quickAdd?text=Lunch%20with%20Ana%20tomorrow%2012%3A30',
        headers: { 'content-type': undefined },
        body: '',
      },
    });
  });

  it('asks for free/busy times with a JSON query', async () => {
    const query = {
      timeMin: '2025-03-11T08:00:00Z',
      timeMax: '2025-03-11T17:00:00Z',
      timeZone: 'Europe/Berlin',
      items: [{ id: 'primary' }, { id: 'nobody@example.com' }],
    };
    await gcal.expectCall({
      tool: 'google_calendar_query_free_busy',
      args: query,
      ok: '"reason":"notFound"',
      sent: { method: 'POST', url: '/calendar/v3/freeBusy', json: query },
    });
  });

  it("passes Google's 404 and 429 on in Google's words, with when to retry", async () => {
    await gcal.expectCall({
      tool: 'google_calendar_get_event',
      args: { eventId: 'nosuchevent' },
      error: /^google-calendar returned HTTP 404 Not Found: Not Found\n/,
      sent: { method: 'GET', url: '/calendar/v3/calendars/primary/events/nosuchevent' },
    });
    await gcal.expectCall({
      tool: 'google_calendar_list_calendars',
      error:
        /HTTP 429 Too Many Requests: Rate Limit Exceeded.*rate limiting these calls: retry after 30 seconds/s,
      sent: { method: 'GET', url: '/calendar/v3/users/me/calendarList' },
    });
  });
});
