import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { YamlSource } from '../../../core/catalog/yaml-source.js';

/** What `yaml`, the authority, reads: the data, or its first error. */
function reference(text: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors[0]) return { error: doc.errors[0].message };
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function read(text: string): unknown {
  const source = new YamlSource('m.yaml', text);
  const [finding] = source.findings;
  return finding ? { error: finding.message } : source.toJS();
}

function* yamlFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* yamlFiles(path);
    else if (/\.ya?ml$/.test(entry.name)) yield path;
  }
}

describe('YamlSource', () => {
  it('reads every bundled manifest and test fixture as yaml does', () => {
    const files = [...yamlFiles('manifests'), ...yamlFiles('test/fixtures')];
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(new YamlSource(file, text).toJS(), file).toEqual(reference(text));
    }
  });

  it.each([
    ['integers in three bases', 'a: 12\nb: -0\nc: +7\nd: 0o17\ne: 0x1F\nf: 012\ng: 12345678901234567890'],
    ['floats, infinities and NaN', 'a: 1.5\nb: .5\nc: 1.\nd: 1e3\ne: -2.5E-2\nf: .inf\ng: -.Inf\nh: .NaN'],
    [
      'what YAML 1.1 read as numbers, booleans or dates',
      'a: 1_000\nb: yes\nc: off\nd: 2024-01-01\ne: 0b101\nf: 1:30',
    ],
    ['booleans and nulls', 'a: true\nb: False\nc: TRUE\nd: ~\ne: Null\nf:\ng: NULL\nh: nul'],
    ['scalar keys', '1: a\ntrue: b\n~: c\n1.5: d\n0x10: e\nlist:\n  - null: x\n    { Null: y }: z'],
    ['collections as keys', '[a, b]: c\n{x: 1}: y\n? [p, q]\n: r\nlist:\n  - [m]: n'],
    ['a YAML 1.1 directive', '%YAML 1.1\n---\na: yes\nb: 0777\n'],
    ['explicit tags', 'a: !!str 5\nb: !!int "7"\nc: !!float "2"\nd: !!bool "true"\ne: !!null ""'],
    ['an unknown tag', 'a: !custom x'],
    [
      'anchors and aliases',
      'base: &b { type: string, maxLength: 5 }\nx: *b\ny: [*b, *b]\nm: &m { a: 1 }\nn: { <<: *m, b: 2 }',
    ],
    [
      'block and quoted scalars',
      "a: |\n  x\n  y\nb: >-\n  p\n\n  q\nc: \"\\u00e9\\t\"\nd: 'it''s'\ne: plain # comment\nf: 2#x",
    ],
    ['an empty document, comments only', '# nothing here\n'],
    ['an empty file', ''],
    ['a duplicate key', 'a: 1\nb: 2\na: 3'],
    ['tabs as indentation', 'a:\n\t- x'],
    ['a nested compact mapping', 'a: b: c'],
    ['two documents', 'a: 1\n---\nb: 2'],
    ['an unclosed flow sequence', 'a: [1, 2\nb: 3'],
    ['a reserved indicator', 'a: @x'],
    ['an alias to no anchor', 'a: *nowhere'],
    ['__proto__ as a key', '__proto__: { polluted: true }\nb: 1'],
  ])('reads %s as yaml does', (_what, text) => {
    const expected = reference(text) as { error?: string } | null;
    const got = read(text) as { error?: string } | null;
    if (expected?.error !== undefined) expect(got?.error).toMatch(/; fix the YAML syntax$/);
    else expect(got).toEqual(expected);
  });

  it('reports aliases that expand without bound as a finding of the manifest', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
      const previous = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const source = new YamlSource('lol.yaml', levels.join('\n'));
    expect(source.findings).toEqual([
      expect.objectContaining({
        code: 'TG_MANIFEST_YAML',
        line: 1,
        message: 'Excessive alias count indicates a resource exhaustion attack; fix the YAML syntax',
      }),
    ]);
    expect(source.toJS()).toBeUndefined();
  });

  it('locates a finding on the line and column where the node is written', () => {
    const source = new YamlSource(
      'm.yaml',
      'id: acme\nauth:\n  kind: api_key\n  inject:\n    - { in: header, name: X }\n',
    );
    expect(source.finding('TG_MANIFEST_UNKNOWN_KEY', ['auth', 'inject', 0, 'name'], 'm')).toMatchObject({
      line: 5,
      col: 27,
    });
    expect(source.position(['auth', 'kind'], true)).toEqual({ line: 3, col: 3 });
  });
});
