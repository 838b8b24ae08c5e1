import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { googleErrorAnswer, googleNotFound, useGoogleApi } from './google.js';
import { jsonAnswer, type Answer } from './helpers.js';

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

/** A loopback Drive API v3 (behind googleApi: bearer token, Google's error shape); routes by path. */
function drive(req: Received): Answer | undefined {
  switch (`${req.method} ${req.url.split('?')[0]}`) {
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
      return googleNotFound('File not found: 1Nope.');
    case 'GET /drive/v3/about':
      return googleErrorAnswer(403, 'User rate limit exceeded.', {
        reason: 'userRateLimitExceeded',
        domain: 'usageLimits',
        status: 'PERMISSION_DENIED',
      });
  }
}

const gdrive = useGoogleApi({
  provider: 'google-drive',
  accessToken: TOKEN,
  account: 'ana@example.com',
  basePath: '/drive/v3',
  route: drive,
});

describe('Google Drive over /mcp/ with a seeded OAuth connection', () => {
  it("searches with Drive's query language, asking for the fields agents need", async () => {
    const { requests } = await gdrive.expectCall({
      tool: 'google_drive_list_files',
      args: { q: "name contains 'budget' and trashed = false", orderBy: 'modifiedTime desc', pageSize: 10 },
      ok: `"webViewLink":"${doc.webViewLink}"`,
      sent: {
        method: 'GET',
        path: '/drive/v3/files',
        query: [
          ['q', "name contains 'budget' and trashed = false"],
          ['orderBy', 'modifiedTime desc'],
          ['pageSize', '10'],
          [
            'fields',
            'nextPageToken, files(id, name, mimeType, modifiedTime, size, webViewLink, parents, owners(displayName, emailAddress))',
          ],
        ],
        headers: { authorization: `Bearer ${TOKEN}` },
        body: '',
      },
    });
    // Every reserved character is percent-encoded (RFC 3986), as Google's clients send it.
    expect(requests[0]!.url).toMatch(
      /^\/drive\/v3\/files\?q=name%20contains%20%27budget%27%20and%20trashed%20%3D%20false&/,
    );
  });

  it('exports a Google Doc as Markdown and downloads a CSV file as text', async () => {
    await gdrive.expectCall({
      tool: 'google_drive_export_file',
      args: { fileId: DOC, mimeType: 'text/markdown' },
      ok: '| Rent | 1200 |',
      sent: { method: 'GET', url: `/drive/v3/files/${DOC}/export?mimeType=text%2Fmarkdown` },
    });
    await gdrive.expectCall({
      tool: 'google_drive_download_file',
      args: { fileId: CSV },
      ok: true,
      text: 'item,amount\nrent,1200\n',
      sent: { method: 'GET', url: `/drive/v3/files/${CSV}?alt=media` },
    });
  });

  it('renames and moves a file with one PATCH: folder changes in the query, metadata in the body', async () => {
    await gdrive.expectCall({
      tool: 'google_drive_update_file',
      args: {
        fileId: DOC,
        name: 'Q3 budget (final)',
        addParents: '0BArchive',
        removeParents: '0AFolderRootxyz',
      },
      ok: true,
      sent: {
        method: 'PATCH',
        path: `/drive/v3/files/${DOC}`,
        query: [
          ['addParents', '0BArchive'],
          ['removeParents', '0AFolderRootxyz'],
          ['fields', FILE_FIELDS],
        ],
        headers: { 'content-type': 'application/json' },
        json: { name: 'Q3 budget (final)' },
      },
    });
  });

  it('shares a file with a person, without the notification email', async () => {
    const permission = { type: 'user', role: 'writer', emailAddress: 'bob@example.com' };
    await gdrive.expectCall({
      tool: 'google_drive_share_file',
      args: { fileId: DOC, ...permission, sendNotificationEmail: false },
      ok: true,
      sent: {
        method: 'POST',
        path: `/drive/v3/files/${DOC}/permissions`,
        query: [['sendNotificationEmail', 'false']],
        json: permission,
      },
    });
  });

  it("passes Drive's errors on in its own words", async () => {
    await gdrive.expectCall({
      tool: 'google_drive_get_file',
      args: { fileId: '1Nope' },
      error: /^google-drive returned HTTP 404 Not Found: File not found: 1Nope\.\n/,
      sent: { method: 'GET', path: '/drive/v3/files/1Nope' },
    });
    await gdrive.expectCall({
      tool: 'google_drive_get_about',
      error: 'HTTP 403 Forbidden: User rate limit exceeded.',
      sent: {
        method: 'GET',
        url: '/drive/v3/about?fields=user%28displayName%2C%20emailAddress%29%2C%20storageQuota',
      },
    });
  });
});
