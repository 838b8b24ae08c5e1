/**
 * The catalogue of finding codes of manifest validation and OpenAPI compilation, and the one-line
 * format operators and CI read. Codes are stable and never reused (STYLE.md, practice 4).
 */
import type { Finding } from './types.js';

/** Every code a Finding of the catalog can carry, with what it means. */
export const FINDING_CODES = {
  TG_MANIFEST_YAML: 'The file is not valid YAML.',
  TG_MANIFEST_UNKNOWN_KEY: 'A key the schema does not define.',
  TG_MANIFEST_MISSING_KEY: 'A required key is absent.',
  TG_MANIFEST_WRONG_TYPE: 'A value has the wrong type.',
  TG_MANIFEST_BAD_VALUE: 'A value is outside what the schema allows.',
  TG_MANIFEST_WRONG_SHAPE: 'A value matches none of the allowed shapes.',
  TG_MANIFEST_SCHEMA_COMMENT: 'The editor schema comment is missing from the first line.',
  TG_MANIFEST_ID_MISMATCH: 'The id differs from the file name.',
  TG_MANIFEST_BAD_REGEX: 'A pattern is not a valid regular expression.',
  TG_MANIFEST_UNKNOWN_PLACEHOLDER: 'A ${name} placeholder names nothing defined.',
  TG_MANIFEST_FREE_FIELD: 'A connection field has neither enum nor an anchored pattern.',
  TG_MANIFEST_BAD_DEFAULT: 'A connection field default is not one of its allowed values.',
  TG_MANIFEST_BASE_URL: 'The base URL is missing or does not fit the connection fields.',
  TG_MANIFEST_UNKNOWN_SERVER: 'A server name is not defined under api.servers.',
  TG_MANIFEST_WEBHOOK_NOT_HTTPS: 'A webhook URL pattern admits URLs other than https.',
  TG_MANIFEST_UNKNOWN_PLUGIN: 'The plugin is not registered.',
  TG_MANIFEST_FILE_NOT_FOUND: 'The OpenAPI document file does not exist.',
  TG_MANIFEST_SELECTOR_UNMATCHED: 'A selector matches no operation or tool.',
  TG_MANIFEST_OVERRIDE_UNMATCHED: 'An override names no operation of the document.',
  TG_MANIFEST_OVERRIDE_UNUSED: 'An override names an operation that is not selected.',
  TG_MANIFEST_BAD_TOOL_NAME: 'A tool name breaks the naming rule.',
  TG_MANIFEST_DUPLICATE_TOOL: 'Two tools have the same name after normalising.',
  TG_MANIFEST_DUPLICATE_CATEGORY: 'Two categories have the same id.',
  TG_MANIFEST_UNKNOWN_TOOL: 'A tool name refers to no tool of the provider.',
  TG_MANIFEST_TOOL_IN_TWO_CATEGORIES: 'A tool is listed by name in two categories.',
  TG_MANIFEST_UNCATEGORIZED: 'Tools that fall in no category.',
  TG_MANIFEST_EMPTY_CATEGORY: 'A category holds no tool.',
  TG_MANIFEST_BAD_OPERATION_REF: 'verify/identity names neither a tool nor method + path, or both.',
  TG_MANIFEST_BAD_SCHEMA: 'An inline JSON Schema does not compile or uses $ref.',
  TG_MANIFEST_UNKNOWN_ARG: 'An inline request names an argument the input schema lacks.',
  TG_MANIFEST_NO_TOOLS: 'The provider defines no tools.',
  TG_MANIFEST_MCP_CONFLICT:
    'An mcp provider also gives what its upstream MCP server gives (openapi, tools, plugin, api, verify, identity), or discovery: mcp lacks mcp.',
  TG_OPENAPI_INVALID: 'The OpenAPI document cannot be read.',
  TG_OPENAPI_UNSUPPORTED: 'An operation uses a construct the compiler does not support; it is skipped.',
  TG_OPENAPI_TOO_MANY_TOOLS: 'More operations are selected than max_tools allows.',
  TG_OPENAPI_SCHEMA_CUT:
    'A recursive or too deeply nested schema is an open object in some tools, described as such.',
  TG_OPENAPI_BAD_SCHEMA:
    'An operation compiles to an input schema that is not valid JSON Schema; it is skipped.',
  TG_CATALOG_BUILD_LIMIT:
    'Building the manifest went over the time or memory limit of a catalog build; it was stopped.',
  TG_CATALOG_BUILD_CRASHED: 'Building the manifest stopped its build worker.',
} as const;

export type FindingCode = keyof typeof FINDING_CODES;

/** `file:line:col  CODE  path > to > field  message`, one finding a line. */
export function formatFinding(finding: Finding): string {
  const path = finding.path.length > 0 ? finding.path.join(' > ') : '(root)';
  const level = finding.severity === 'warning' ? ' (warning)' : '';
  return `${finding.file}:${finding.line}:${finding.col}  ${finding.code}  ${path}  ${finding.message}${level}`;
}

/** Formats findings in file, line, column order. */
export function formatFindings(findings: readonly Finding[]): string {
  return sortFindings(findings).map(formatFinding).join('\n');
}

/** Sorts findings by file, position and code, so reports are stable. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      compare(a.file, b.file) ||
      a.line - b.line ||
      a.col - b.col ||
      compare(a.code, b.code) ||
      compare(a.message, b.message),
  );
}

export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
