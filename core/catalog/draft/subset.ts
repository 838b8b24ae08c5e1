/**
 * `--operations`: the manifests' operation selectors (select.ts) written on one line, and the
 * curated subset of a document holding only the operations they pick and what those reach.
 *
 * Syntax: selectors separated by `;`, each either `key=glob` fields separated by `,` (keys
 * operationId, tag, method, path; all must match, as in openapi > operations > include), or a
 * shorthand: `METHOD /path`, a `/path` glob, or an operationId glob.
 */
import { HTTP_METHODS } from '../http-methods.js';
import type { OperationSelectorSpec } from '../manifest-schema.js';
import { isObject, type JsonObject, type OpenApiDocument, type OperationRef } from '../openapi/document.js';
import { selectorMatches } from '../openapi/select.js';
import { securitySchemes } from './auth.js';

const KEYS = ['operationId', 'tag', 'method', 'path'] as const;
type Method = (typeof HTTP_METHODS)[number];

/** Thrown with a message saying what to write instead. */
class SelectorSyntaxError extends Error {}

function method(value: string, selector: string): Method {
  const upper = value.toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(upper))
    throw new SelectorSyntaxError(
      `"${value}" in "${selector}" is no HTTP method; use one of ${HTTP_METHODS.join(', ')}`,
    );
  return upper as Method;
}

export function parseSelectors(text: string): OperationSelectorSpec[] {
  const selectors = text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((selector): OperationSelectorSpec => {
      const shorthand = /^([A-Za-z]+)\s+(\/\S*)$/.exec(selector);
      if (shorthand) return { method: method(shorthand[1]!, selector), path: shorthand[2]! };
      if (!selector.includes('='))
        return selector.startsWith('/') ? { path: selector } : { operationId: selector };
      const spec: OperationSelectorSpec = {};
      for (const field of selector.split(',')) {
        const at = field.indexOf('=');
        const key = field.slice(0, at).trim();
        const value = field.slice(at + 1).trim();
        if (at < 0 || value === '')
          throw new SelectorSyntaxError(`"${field.trim()}" in "${selector}" is not key=value`);
        if (key === 'method') spec.method = method(value, selector);
        else if (key === 'operationId' || key === 'tag' || key === 'path') spec[key] = value;
        else
          throw new SelectorSyntaxError(
            `unknown selector key "${key}" in "${selector}"; use ${KEYS.map((k) => `${k}=`).join(', ')}`,
          );
      }
      return spec;
    });
  if (selectors.length === 0)
    throw new SelectorSyntaxError('--operations is empty; give selectors such as "tag=issues;GET /user"');
  return selectors;
}

/** The selector as written in a manifest's flow style, for messages. */
export function selectorText(selector: OperationSelectorSpec): string {
  return Object.entries(selector)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(',');
}

/** The operations any selector picks, and the selectors that pick nothing. */
export function selectOperations(
  operations: readonly OperationRef[],
  selectors: readonly OperationSelectorSpec[],
): { selected: OperationRef[]; unmatched: OperationSelectorSpec[] } {
  return {
    selected: operations.filter((op) => selectors.some((s) => selectorMatches(s, op))),
    unmatched: selectors.filter((s) => !operations.some((op) => selectorMatches(s, op))),
  };
}

// Top-level keys the subset rebuilds from what the selected operations reach.
const REBUILT = new Set([
  'paths',
  'components',
  'definitions',
  'parameters',
  'responses',
  'securityDefinitions',
  'tags',
  'webhooks',
]);
const METHOD_KEYS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Local `$ref`s under `node`, and discriminator mappings (which name schemas without `$ref`). */
function collectRefs(node: unknown, into: string[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, into);
    return;
  }
  if (!isObject(node)) return;
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) into.push(node.$ref);
  if (isObject(node.discriminator) && isObject(node.discriminator.mapping))
    for (const target of Object.values(node.discriminator.mapping))
      if (typeof target === 'string' && target.startsWith('#/')) into.push(target);
  for (const value of Object.values(node)) collectRefs(value, into);
}

function segments(ref: string): string[] {
  return ref
    .slice(2)
    .split('/')
    .map((raw) => decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Sets `value` at `path` in `root`, creating objects on the way. */
function setAt(root: JsonObject, path: readonly string[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as JsonObject;
  }
  node[path.at(-1)!] = value;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path)
    node = isObject(node) || Array.isArray(node) ? (node as JsonObject)[key] : undefined;
  return node;
}

/**
 * Replaces each `$ref` into the paths whose target the subset does not hold with a copy of that
 * target: DigitalOcean's operations share parameters by pointing at another operation's, and that
 * operation may not be selected, which would leave the `$ref` dangling. `chain` stops a cycle.
 */
function inlineDanglingPathRefs(
  node: unknown,
  root: JsonObject,
  kept: JsonObject,
  chain: readonly string[] = [],
): void {
  if (Array.isArray(node)) {
    for (const item of node) inlineDanglingPathRefs(item, root, kept, chain);
    return;
  }
  if (!isObject(node)) return;
  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/paths/') && !chain.includes(ref)) {
    const path = segments(ref);
    const target = valueAt(root, path);
    if (valueAt(kept, path) === undefined && isObject(target)) {
      delete node.$ref;
      Object.assign(node, structuredClone(target));
      inlineDanglingPathRefs(node, root, kept, [...chain, ref]);
      return;
    }
  }
  for (const value of Object.values(node)) inlineDanglingPathRefs(value, root, kept, chain);
}

/**
 * The document cut to `selected`: its info and servers, the selected operations under their paths
 * (with the path items' shared parameters), the tags they use, the security schemes they name, and
 * every component they reach through `$ref`s, transitively.
 */
export function subsetDocument(doc: OpenApiDocument, selected: readonly OperationRef[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(doc.root)) if (!REBUILT.has(key)) out[key] = value;
  const paths: JsonObject = {};
  for (const op of selected) {
    const kept = (paths[op.path] ??= Object.fromEntries(
      Object.entries(op.pathItem).filter(([key]) => !METHOD_KEYS.has(key)),
    )) as JsonObject;
    kept[op.method.toLowerCase()] = op.operation;
  }
  // A copy, so that inlining does not write into the document the operations came from.
  out.paths = structuredClone(paths);
  inlineDanglingPathRefs(out.paths, doc.root, { paths: out.paths });
  const used = new Set(selected.flatMap((op) => op.tags));
  if (Array.isArray(doc.root.tags)) {
    const tags = doc.root.tags.filter((t) => isObject(t) && used.has(String(t.name)));
    if (tags.length > 0) out.tags = tags;
  }

  const pending: string[] = [];
  collectRefs(out.paths, pending);
  const done = new Set<string>();
  while (pending.length > 0) {
    const ref = pending.shift()!;
    if (done.has(ref)) continue;
    done.add(ref);
    const path = segments(ref);
    // Whatever lies under paths is there when its operation is selected; copying a part of an
    // operation that is not would add that operation.
    if (path[0] === 'paths') continue;
    const target = valueAt(doc.root, path);
    if (target === undefined || valueAt(out, path) !== undefined) continue;
    setAt(out, path, target);
    collectRefs(target, pending);
  }

  // Components in the document's order, so the subset reads (and diffs) like the original.
  const containers: Array<[JsonObject, string]> = [
    [out, 'definitions'],
    [out, 'parameters'],
    [out, 'responses'],
    ...Object.keys(isObject(out.components) ? out.components : {}).map((key): [JsonObject, string] => [
      out.components as JsonObject,
      key,
    ]),
  ];
  for (const [parent, key] of containers) {
    const original = valueAt(doc.root, parent === out ? [key] : ['components', key]);
    const copy = parent[key];
    if (isObject(copy) && isObject(original))
      parent[key] = Object.fromEntries(
        Object.keys(original).flatMap((k) => (k in copy ? [[k, copy[k]]] : [])),
      );
  }

  // Security schemes by name: those the document or the selected operations require, else all.
  const named = new Set(
    [doc.root.security, ...selected.map((op) => op.operation.security)]
      .filter(Array.isArray)
      .flatMap((list) => list.filter(isObject).flatMap((req) => Object.keys(req))),
  );
  const schemes = securitySchemes(doc);
  const home = doc.version === '2.0' ? ['securityDefinitions'] : ['components', 'securitySchemes'];
  for (const [name, scheme] of schemes)
    if (named.size === 0 || named.has(name)) setAt(out, [...home, name], scheme);
  return out;
}
