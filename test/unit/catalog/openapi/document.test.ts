import { describe, expect, it } from 'vitest';
import { loadDocument } from '../../../../core/catalog/openapi/document.js';

/**
 * A 3.0 document whose one operation's description is `description`, as JSON bytes: `padding`
 * characters before it, and half a megabyte of ASCII after it, enough text for the loader to
 * escape up to 32 runs of characters beyond ASCII rather than decode it whole.
 */
function documentBytes(description: string, padding = 0): Buffer {
  const root = {
    openapi: '3.0.3',
    info: { title: 'x'.repeat(padding), version: '1' },
    paths: { '/items': { get: { operationId: 'list_items', description, responses: {} } } },
    'x-notes': 'y'.repeat(512 * 1024),
  };
  return Buffer.from(JSON.stringify(root), 'utf8');
}

/** A document, written by hand, whose title is the JSON text `title`, half a megabyte of ASCII after it. */
function withTitle(title: string): Buffer {
  const notes = 'y'.repeat(512 * 1024);
  return Buffer.from(
    `{"openapi":"3.0.3","info":{"title":${title},"version":"1"},"x-notes":"${notes}","paths":{}}`,
  );
}

/** What the loader must read from JSON bytes: JSON.parse of their UTF-8 text. */
function parsed(bytes: Buffer): unknown {
  return JSON.parse(bytes.toString('utf8'));
}

describe('loadDocument: JSON text beyond ASCII', () => {
  it('reads every character as JSON.parse of the UTF-8 text does: Latin-1, BMP, astral, separators', async () => {
    const description = 'Café – “quoted” · ’tis\u00a0here 🍫 中文 \u2028 end';
    const bytes = documentBytes(description);
    const doc = await loadDocument('api.json', bytes);
    expect(doc.root).toEqual(parsed(bytes));
    expect(
      (doc.root.paths as Record<string, { get: { description: string } }>)['/items']!.get.description,
    ).toBe(description);
  });

  it('reads a character whose bytes straddle a stretch the text is scanned in (64 KB, and its halves)', async () => {
    // The emoji's four bytes start a little before each boundary, in turn at each offset.
    const probe = documentBytes('🚒');
    const at = probe.indexOf(Buffer.from('🚒'));
    for (const boundary of [64 * 1024, 32 * 1024, 4096, 128])
      for (let shift = 0; shift < 6; shift++) {
        const bytes = documentBytes('a 🚒 and é', boundary - at - shift);
        expect((await loadDocument('api.json', bytes)).root).toEqual(parsed(bytes));
      }
  });

  it('reads several runs beyond ASCII in one stretch, and a run in the last bytes of the text', async () => {
    const bytes = documentBytes('é, then ’ and “x”');
    expect((await loadDocument('api.json', bytes)).root).toEqual(parsed(bytes));
    const last = Buffer.from('{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"x":"é"}');
    expect((await loadDocument('api.json', last)).root).toEqual(parsed(last));
  });

  it('reads invalid UTF-8 as the replacement character, as a UTF-8 decoder does', async () => {
    const good = documentBytes('AB');
    const at = good.indexOf(Buffer.from('AB'));
    // A lone continuation byte, a truncated three-byte sequence, then an overlong two-byte one.
    const bytes = Buffer.concat([
      good.subarray(0, at),
      Buffer.from([0x80, 0x41, 0xe2, 0x82, 0x42, 0xc0, 0xaf]),
      good.subarray(at + 2),
    ]);
    const doc = await loadDocument('api.json', bytes);
    expect(doc.root).toEqual(parsed(bytes));
    expect(JSON.stringify(doc.root)).toContain('\ufffdA\ufffdB\ufffd\ufffd');
  });

  it('matches JSON.parse on many documents with characters beyond ASCII at random places', async () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['a', ' ', '"', '\\', '\n', 'é', '’', '—', '🪲', '\u00a0', 'ä', '\ufffd', '中'];
    for (let round = 0; round < 100; round++) {
      const text = Array.from({ length: 1 + random(40) }, () => alphabet[random(alphabet.length)]!).join('');
      const bytes = documentBytes(text, random(5000));
      expect((await loadDocument('api.json', bytes)).root).toEqual(parsed(bytes));
    }
  });

  it('reads a text with a run beyond ASCII every few bytes (decoded whole)', async () => {
    const bytes = documentBytes('获取项目列表，按创建时间排序。 '.repeat(4000));
    expect((await loadDocument('api.json', bytes)).root).toEqual(parsed(bytes));
  });

  it('still refuses a raw character after a backslash (an invalid escape), rather than read it as "\\u…"', async () => {
    const bytes = withTitle('"\\’"');
    expect(() => parsed(bytes)).toThrow(SyntaxError);
    await expect(loadDocument('api.json', bytes)).rejects.toThrow();
  });

  it('reads an escaped backslash followed by such a character', async () => {
    const bytes = withTitle('"\\\\’"');
    const doc = await loadDocument('api.json', bytes);
    expect((doc.root.info as { title: string }).title).toBe('\\’');
  });
});
