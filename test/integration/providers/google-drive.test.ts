import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import {
  googleErrorAnswer,
  jsonAnswer,
  jsonBody,
  seedOAuthProvider,
  type Answer,
  type SeededOAuthProvider,
} from './helpers.js';

const TOKEN = 'ya29.a0AfB_byD2driveTestToken9876543210fedcba';
const DOC = '1Hq4bU0tQk3mZ5XcR8vWn2pLs7YdJ6eFg9AiKoT1uVwE';
const CSV = '1Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fE';
const FILE_FIELDS = 'id, name, mimeType, parents, webViewLink';

const doc = {
  id: DOC,
  name: 'Q3 budget',
  mimeType: 'application/vnd.google-apps.document',
  modifiedTime: '2025-03-01T09:30:12.511Z',
  webViewLink: `https://docs.google.com/document/d/${DOC}/edit?usp=drivesdk`,
  parents: ['0AFolderRootxyz'],
  owners: [{ displayName: 'Ana Lima', emailAddress: 'ana@example.com' }],
};

/** A loopback Drive API v3: bearer token checked; Drive's resource, media and error shapes. */
function drive(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return googleErrorAnswer(401, 'Invalid Credentials', { reason: 'authError', status: 'UNAUTHENTICATED' });
  const url = new URL(req.url, 'http://drive.test');
  switch (`${req.method} ${url.pathname}`) {
    case 'GET /drive/v3/files':
      return jsonAnswer(200, { nextPageToken: '~!!~AI9FV7Q', files: [doc] });
    case `GET /drive/v3/files/${DOC}/export`:
      return {
        status: 200,
        body: '# Q3 budget\n\n| Item | € |\n|---|---|\n| Rent | 1200 |\n',
        headers: { 'content-type': 'text/markdown' },
      };
    case `GET /drive/v3/files/${CSV}`:
      return { status: 200, body: 'item,amount\nrent,1200\n', headers: { 'content-type': 'text/csv' } };
    case `PATCH /drive/v3/files/${DOC}`:
      return jsonAnswer(200, { ...doc, name: 'Q3 budget (final)', parents: ['0BArchive'] });
    case `POST /drive/v3/files/${DOC}/permissions`:
      return jsonAnswer(200, {
        kind: 'drive#permission',
        id: '08765432101234567890',
        type: 'user',
        role: 'writer',
      });
    case 'GET /drive/v3/files/1Nope':
      return googleErrorAnswer(404, 'File not found: 1Nope.', { reason: 'notFound', status: 'NOT_FOUND' });
    case 'GET /drive/v3/about':
      return googleErrorAnswer(403, 'User rate limit exceeded.', {
        reason: 'userRateLimitExceeded',
        domain: 'usageLimits',
        status: 'PERMISSION_DENIED',
      });
    default:
      return googleErrorAnswer(400, `Invalid request: ${req.method} ${req.url}`, {
        reason: 'badRequest',
        status: 'INVALID_ARGUMENT',
      });
  }
}

/** The query of a received request, as ordered name/value pairs. */
function query(request: Received | undefined): [string, string][] {
  return [...new URL(request!.url, 'http://drive.test').searchParams];
}

let gdrive: SeededOAuthProvider;

beforeAll(async () => {
  gdrive = await seedOAuthProvider({
    provider: 'google-drive',
    accessToken: TOKEN,
    account: 'ana@example.com',
    basePath: '/drive/v3',
    respond: drive,
  });
});
afterAll(async () => {
  await gdrive.close();
});

describe('Google Drive over /mcp/ with a seeded OAuth connection', () => {
  it("searches with Drive's query language, asking for the fields agents need", async () => {
    const result = await gdrive.client.callTool('google_drive_list_files', {
      q: "name contains 'budget' and trashed = false",
      orderBy: 'modifiedTime desc',
      pageSize: 10,
    });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain(`"webViewLink": "${doc.webViewLink}"`);
    const [sent] = gdrive.sent();
    expect(sent).toMatchObject({ method: 'GET', body: '' });
    expect(sent!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(query(sent)).toEqual([
      ['q', "name contains 'budget' and trashed = false"],
      ['orderBy', 'modifiedTime desc'],
      ['pageSize', '10'],
      [
        'fields',
        'nextPageToken, files(id, name, mimeType, modifiedTime, size, webViewLink, parents, owners(displayName, emailAddress))',
      ],
    ]);
    // Every reserved character is percent-encoded (RFC 3986), as Google's clients send it.
    expect(sent!.url).toMatch(
      /^\/drive\/v3\/files\?q=name%20contains%20%27budget%27%20and%20trashed%20%3D%20false&/,
    );
  });

  it('exports a Google Doc as Markdown and downloads a CSV file as text', async () => {
    const exported = await gdrive.client.callTool('google_drive_export_file', {
      fileId: DOC,
      mimeType: 'text/markdown',
    });
    expect(exported.isError).toBeFalsy();
    expect(exported.content[0]!.text).toContain('| Rent | 1200 |');
    const downloaded = await gdrive.client.callTool('google_drive_download_file', { fileId: CSV });
    expect(downloaded.content[0]!.text).toBe('item,amount\nrent,1200\n');
    const [exportRequest, download] = gdrive.sent();
    expect(exportRequest!.url).toBe(`/drive/v3/files/${DOC}/export?mimeType=text%2Fmarkdown`);
    expect(download!.url).toBe(`/drive/v3/files/${CSV}?alt=media`);
  });

  it('renames and moves a file with one PATCH: folder changes in the query, metadata in the body', async () => {
    const result = await gdrive.client.callTool('google_drive_update_file', {
      fileId: DOC,
      name: 'Q3 budget (final)',
      addParents: '0BArchive',
      removeParents: '0AFolderRootxyz',
    });
    expect(result.isError).toBeFalsy();
    const [sent] = gdrive.sent();
    expect(sent).toMatchObject({ method: 'PATCH' });
    expect(query(sent)).toEqual([
      ['addParents', '0BArchive'],
      ['removeParents', '0AFolderRootxyz'],
      ['fields', FILE_FIELDS],
    ]);
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(jsonBody(sent)).toEqual({ name: 'Q3 budget (final)' });
  });

  it('shares a file with a person, without the notification email', async () => {
    const result = await gdrive.client.callTool('google_drive_share_file', {
      fileId: DOC,
      type: 'user',
      role: 'writer',
      emailAddress: 'bob@example.com',
      sendNotificationEmail: false,
    });
    expect(result.isError).toBeFalsy();
    const [sent] = gdrive.sent();
    expect(query(sent)).toEqual([['sendNotificationEmail', 'false']]);
    expect(jsonBody(sent)).toEqual({ type: 'user', role: 'writer', emailAddress: 'bob@example.com' });
  });

  it("passes Drive's errors on in its own words", async () => {
    const missing = await gdrive.client.callTool('google_drive_get_file', { fileId: '1Nope' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(
      /^google-drive returned HTTP 404 Not Found: File not found: 1Nope\.\n/,
    );

    const limited = await gdrive.client.callTool('google_drive_get_about', {});
    expect(limited.isError).toBe(true);
    expect(limited.content[0]!.text).toContain('HTTP 403 Forbidden: User rate limit exceeded.');
    expect(gdrive.sent()[1]!.url).toBe(
      '/drive/v3/about?fields=user%28displayName%2C%20emailAddress%29%2C%20storageQuota',
    );
  });
});
