/**
 * Tool names (DESIGN.md, Fixed interfaces): `<provider>_<operation>` matching ^[a-z0-9_]{1,48}$.
 *
 * The rule, in order:
 * 1. the manifest's override, when it names one;
 * 2. the operationId, snake_cased: camelCase and PascalCase split at case changes, every run of
 *    other characters becomes `_` (GitHub's `issues/create` -> `github_issues_create`,
 *    `listPets` -> `list_pets`, `getHTTPStatus` -> `get_http_status`);
 * 3. without an operationId, the method and the path: `GET /pets/{petId}` -> `get_pets_pet_id`;
 * 4. longer than 48 characters: cut to 41 and suffixed with `_` and 6 hex characters of the
 *    SHA-256 of the operation's `METHOD /path`, so the cut is stable and names stay distinct;
 * 5. a name already taken gets `_2`, `_3`, ... (operations are named in `METHOD /path` order).
 */
import { createHash } from 'node:crypto';

const MAX_TOOL_NAME = 48;

/** `slack-webhook` -> `slack_webhook_`: the prefix of the provider's tool names. */
export function toolPrefix(providerId: string): string {
  return `${providerId.replace(/-/g, '_')}_`;
}

export function snakeCase(text: string): string {
  return text
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The name an operation gets by rules 2-4, before collisions are resolved. */
export function deriveToolName(
  providerId: string,
  operation: { operationId?: string; method: string; path: string },
): string {
  const fromId = operation.operationId === undefined ? '' : snakeCase(operation.operationId);
  const base =
    fromId !== '' ? fromId : snakeCase(`${operation.method} ${operation.path.replace(/[{}]/g, '')}`);
  return fitName(toolPrefix(providerId) + base, `${operation.method} ${operation.path}`);
}

/** Rule 4: a name cut to the limit with a stable hash of `key`. */
function fitName(name: string, key: string): string {
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 6);
  return `${name.slice(0, MAX_TOOL_NAME - 7).replace(/_+$/, '')}_${hash}`;
}

/** Rule 5: `name`, or the first of `name_2`, `name_3`, ... not in `taken`. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = name.slice(0, MAX_TOOL_NAME - suffix.length).replace(/_+$/, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Names compared for uniqueness: case and punctuation do not make two tools distinct. */
export function normaliseName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}
