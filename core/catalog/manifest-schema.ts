/**
 * The provider manifest schema, written once: the loader validates with it (ajv), the TS type is
 * derived from it, and scripts/gen-manifest-schema.ts writes it to manifests/manifest.schema.json
 * for editors (STYLE.md, practice 1). Defaults are documented with `default` annotations; the loader
 * does not fill them in, the code that reads a field applies them.
 */
import { Type, type Static, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';
import { HTTP_METHODS } from './http-methods.js';

/** Words that name system tools or the gateway itself; a provider id may not be one of them. */
export const RESERVED_PROVIDER_IDS = [
  'list',
  'connect',
  'disconnect',
  'inspect',
  'report',
  'providers',
  'provider',
  'toolgate',
  'system',
] as const;

function StringEnum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

/**
 * A `oneOf` picked by a discriminator property. ajv (option `discriminator`) then reports errors
 * of the chosen variant only, instead of every variant's.
 */
function Discriminated<T extends TObject[]>(propertyName: string, variants: [...T], description: string) {
  return Type.Unsafe<Static<TUnion<T>>>({
    type: 'object',
    oneOf: variants,
    discriminator: { propertyName },
    description,
  });
}

const strict = { additionalProperties: false } as const;

const ProviderId = Type.String({
  pattern: '^[a-z][a-z0-9-]{1,30}$',
  not: { enum: [...RESERVED_PROVIDER_IDS] },
  description:
    'Lowercase id, 2-31 characters of a-z, 0-9 and -, equal to the file name; prefix of tool names. ' +
    `Never one of: ${RESERVED_PROVIDER_IDS.join(', ')}.`,
});
const HttpsUrl = Type.String({ pattern: '^https://[^\\s]+$', description: 'An https:// URL.' });
const Regex = Type.String({ minLength: 1, description: 'An ECMAScript regular expression (unicode mode).' });
const Glob = Type.String({
  minLength: 1,
  description: 'Exact text, or a glob where * matches any run of characters (including /).',
});
const Name = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'snake_case name.' });
const ToolName = Type.String({
  minLength: 1,
  description: 'Full tool name: `<provider id with - as _>_<name>`, matching ^[a-z0-9_]{1,48}$.',
});
const Template = Type.String({
  minLength: 1,
  description: 'Text where ${name} stands for the credential field of that name.',
});
const Method = StringEnum(HTTP_METHODS, 'HTTP method, upper case.');
const StringMap = (description: string) =>
  Type.Record(Type.String({ minLength: 1 }), Type.String(), { description });

const CredentialField = Type.Object(
  {
    title: Type.String({ minLength: 1, description: 'Label shown to the user, e.g. "API key".' }),
    description: Type.Optional(
      Type.String({ description: 'Where the user finds it, e.g. "Settings > API Keys".' }),
    ),
    pattern: Type.Optional(Regex),
  },
  { ...strict, description: 'One secret the user supplies.' },
);

const Injection = Discriminated(
  'in',
  [
    Type.Object(
      {
        in: Type.Literal('header'),
        name: Type.String({ minLength: 1, description: 'Header name, e.g. Authorization.' }),
        format: Template,
      },
      {
        ...strict,
        description:
          'Send as a header, e.g. { in: header, name: Authorization, format: "Bearer ${api_key}" }.',
      },
    ),
    Type.Object(
      {
        in: Type.Literal('query'),
        name: Type.String({ minLength: 1, description: 'Query parameter name.' }),
        format: Template,
      },
      { ...strict, description: 'Send as a query parameter.' },
    ),
    Type.Object(
      {
        in: Type.Literal('basic'),
        username: Template,
        password: Type.Optional(Type.String({ description: 'Template; empty when absent.', default: '' })),
      },
      { ...strict, description: 'HTTP basic authentication built from templates.' },
    ),
    Type.Object(
      { in: Type.Literal('bearer'), format: Template },
      { ...strict, description: 'Authorization: Bearer <format>.' },
    ),
  ],
  'How a credential is sent: in: header | query | basic | bearer.',
);

const ApiKeyAuth = Type.Object(
  {
    kind: Type.Literal('api_key'),
    credentials: Type.Record(Name, CredentialField, {
      ...strict,
      minProperties: 1,
      description: 'The secrets the user supplies, by name; a single key is conventionally `api_key`.',
    }),
    inject: Type.Array(Injection, {
      minItems: 1,
      description: 'How the credentials are sent on every request.',
    }),
  },
  { ...strict, description: 'The user supplies one or more secrets.' },
);

const WebhookAuth = Type.Object(
  {
    kind: Type.Literal('webhook_url'),
    credential: Type.Optional(CredentialField),
    pattern: Type.String({
      minLength: 1,
      description: 'Regular expression the whole webhook URL must match; starts with ^https://.',
    }),
    allowed_hosts: Type.Array(
      Type.String({
        pattern: '^(\\*\\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$',
        description:
          'Host name, lower case; `*.example.com` allows any subdomain of example.com (not example.com itself).',
      }),
      { minItems: 1, description: 'Hosts the webhook URL may point at.' },
    ),
  },
  {
    ...strict,
    description: 'The user supplies a webhook URL (credential `webhook_url`); tool requests go to it.',
  },
);

const OAuth2Auth = Type.Object(
  {
    kind: Type.Literal('oauth2'),
    discovery: Type.Optional(
      Type.Unsafe<'mcp'>({
        type: 'string',
        enum: ['mcp'],
        description:
          "mcp: the endpoints come from the upstream MCP server's protected-resource and authorization-server metadata (only with `mcp`); authorization_url and token_url are then optional.",
      }),
    ),
    authorization_url: Type.Optional(HttpsUrl),
    token_url: Type.Optional(HttpsUrl),
    revocation_url: Type.Optional(HttpsUrl),
    scopes: Type.Optional(
      Type.Object(
        {
          default: Type.Array(Type.String({ minLength: 1 }), { description: 'Scopes always requested.' }),
          optional: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), { description: 'Scopes a connection may add.' }),
          ),
          separator: Type.Optional(
            Type.String({ default: ' ', description: 'Joins scopes in the authorization URL.' }),
          ),
        },
        strict,
      ),
    ),
    pkce: Type.Optional(Type.Boolean({ default: false, description: 'Use PKCE (S256).' })),
    authorization_params: Type.Optional(StringMap('Extra query parameters of the authorization URL.')),
    token_params: Type.Optional(StringMap('Extra parameters of the token request.')),
    token_request: Type.Optional(
      Type.Object(
        {
          auth_method: Type.Optional(
            Type.Unsafe<'client_secret_basic' | 'client_secret_post'>({
              type: 'string',
              enum: ['client_secret_basic', 'client_secret_post'],
              default: 'client_secret_basic',
              description: 'How the client authenticates to the token endpoint.',
            }),
          ),
          body_format: Type.Optional(
            Type.Unsafe<'form' | 'json'>({
              type: 'string',
              enum: ['form', 'json'],
              default: 'form',
              description: 'Encoding of the token request body.',
            }),
          ),
        },
        strict,
      ),
    ),
    allow_org_apps: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Organizations may bring their own OAuth app (3-level mode).',
      }),
    ),
  },
  { ...strict, description: 'The user approves access in a browser; the gateway keeps the token refreshed.' },
);

const NoAuth = Type.Object({ kind: Type.Literal('none') }, { ...strict, description: 'No credentials.' });

const AuthSchema = Discriminated(
  'kind',
  [ApiKeyAuth, WebhookAuth, OAuth2Auth, NoAuth],
  'How users connect: kind: api_key | webhook_url | oauth2 | none.',
);

const ConnectionField = Type.Object(
  {
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    enum: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Closed choices.' }),
    ),
    pattern: Type.Optional(Regex),
    default: Type.Optional(Type.String()),
  },
  {
    ...strict,
    description: 'A non-secret setting of a connection, with closed choices (enum) or an anchored pattern.',
  },
);

const BaseUrl = Type.Union(
  [
    Type.String({
      pattern: '^https://[^\\s]+$',
      description: 'https URL; ${field} stands for a pattern-validated connection field (a DNS label).',
    }),
    Type.Object(
      {
        by_field: Name,
        values: Type.Record(Type.String({ minLength: 1 }), HttpsUrl, {
          description: 'URL for each value of the field.',
        }),
      },
      strict,
    ),
  ],
  { description: 'an https URL string, or { by_field, values } choosing one by a connection field' },
);

const ApiSchema = Type.Object(
  {
    base_url: Type.Optional(BaseUrl),
    servers: Type.Optional(
      Type.Record(Name, BaseUrl, {
        ...strict,
        description: 'More named base URLs, picked per tool with `server`.',
      }),
    ),
    headers: Type.Optional(StringMap('Static headers sent on every request.')),
  },
  {
    ...strict,
    description: "Where requests go. The base URL includes any base path; documents' servers are ignored.",
  },
);

const OperationRefProps = {
  tool: Type.Optional(ToolName),
  method: Type.Optional(Method),
  path: Type.Optional(Type.String({ description: 'Path relative to the base URL.' })),
};

const VerifySchema = Type.Object(
  {
    ...OperationRefProps,
    status: Type.Optional(
      Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), {
        minItems: 1,
        description: 'Accepted statuses; default any 2xx.',
      }),
    ),
  },
  { ...strict, description: 'Called at connect time to check the credential: a tool, or method + path.' },
);

const IdentitySchema = Type.Object(
  {
    ...OperationRefProps,
    pointer: Type.String({
      pattern: '^(/[^/]*)+$',
      description: 'JSON pointer to the account name in the response, e.g. /login.',
    }),
  },
  {
    ...strict,
    description:
      'Names the connected account: a tool or method + path, and a JSON pointer into its response.',
  },
);

const OperationSelectorProps = {
  operationId: Type.Optional(Glob),
  tag: Type.Optional(Glob),
  method: Type.Optional(Method),
  path: Type.Optional(Glob),
};
const OperationSelector = Type.Object(OperationSelectorProps, {
  ...strict,
  minProperties: 1,
  description: 'Matches operations having all the given properties.',
});
const ToolSelector = Type.Object(
  {
    ...OperationSelectorProps,
    name: Type.Optional(Glob),
    read_only: Type.Optional(
      Type.Boolean({
        description: 'Matches tools whose readOnlyHint annotation is this (absent counts as false).',
      }),
    ),
  },
  { ...strict, minProperties: 1, description: 'Matches tools having all the given properties.' },
);

const Annotations = Type.Object(
  {
    // MCP's own names, copied verbatim into tools/list, so they are not snake_cased.
    readOnlyHint: Type.Optional(Type.Boolean()),
    destructiveHint: Type.Optional(Type.Boolean()),
    idempotentHint: Type.Optional(Type.Boolean()),
    openWorldHint: Type.Optional(Type.Boolean()),
  },
  { ...strict, description: 'MCP tool annotations.' },
);

const OperationOverride = Type.Object(
  {
    name: Type.Optional(ToolName),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String({ minLength: 1 })),
    annotations: Type.Optional(Annotations),
    server: Type.Optional(Name),
  },
  strict,
);

const OpenApiSchema = Type.Object(
  {
    file: Type.String({
      minLength: 1,
      description: 'Path of the OpenAPI document, relative to this manifest.',
    }),
    server: Type.Optional(Name),
    operations: Type.Optional(
      Type.Object(
        {
          include: Type.Optional(
            Type.Array(OperationSelector, { minItems: 1, description: 'Default: every operation.' }),
          ),
          exclude: Type.Optional(Type.Array(OperationSelector, { minItems: 1 })),
        },
        strict,
      ),
    ),
    max_tools: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Ceiling on the number of tools compiled.' }),
    ),
    overrides: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), OperationOverride, {
        description: 'By "METHOD /path" or operationId.',
      }),
    ),
  },
  { ...strict, description: 'The OpenAPI document (2.0, 3.0 or 3.1) and which operations become tools.' },
);

const JsonSchemaObject = Type.Object(
  { type: Type.Literal('object') },
  { additionalProperties: true, description: 'A JSON Schema (2020-12) of an object, without $ref.' },
);

const InlineTool = Type.Object(
  {
    name: ToolName,
    title: Type.Optional(Type.String()),
    description: Type.String({ minLength: 1 }),
    input_schema: JsonSchemaObject,
    output_schema: Type.Optional(JsonSchemaObject),
    annotations: Type.Optional(Annotations),
    request: Type.Object(
      {
        method: Method,
        path: Type.String({
          description:
            'Path relative to the base URL (webhook providers: to the user\'s webhook URL; "" is the URL itself). ' +
            '{arg} is filled from the argument of that name.',
        }),
        query: Type.Optional(
          Type.Array(Type.String({ minLength: 1 }), { description: 'Arguments sent as query parameters.' }),
        ),
        headers: Type.Optional(StringMap('Header name to the argument it is filled from.')),
        body: Type.Optional(
          Type.Object(
            {
              format: Type.Optional(
                Type.Unsafe<'json' | 'form'>({ type: 'string', enum: ['json', 'form'], default: 'json' }),
              ),
              arg: Type.Optional(
                Type.String({ minLength: 1, description: 'Send this one argument as the whole body.' }),
              ),
            },
            strict,
          ),
        ),
        server: Type.Optional(Name),
      },
      {
        ...strict,
        description:
          'Arguments not placed in the path, query or headers form the body (POST, PUT, PATCH) or the query (other methods).',
      },
    ),
  },
  { ...strict, description: 'A tool described here, for providers without an OpenAPI document.' },
);

const SynonymWord = Type.String({
  pattern: '^[a-z0-9]+([ -][a-z0-9]+){0,3}$',
  description: 'Lowercase word, or a phrase of up to 4 words separated by a space or -.',
});

const CategorySchema = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,39}$' }),
    title: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    tools: Type.Optional(Type.Array(ToolName, { description: 'Tools listed by name.' })),
    match: Type.Optional(
      Type.Array(ToolSelector, {
        minItems: 1,
        description:
          "Tools not listed anywhere by name go to the first category with a matching selector; an mcp provider's tool matching none goes to the last category.",
      }),
    ),
  },
  strict,
);

const McpSchema = Type.Object(
  {
    url: Type.String({
      pattern: '^https://[^\\s]+$',
      description:
        "The upstream MCP server's endpoint (https); TOOLGATE_PROVIDER_<ID>_BASE_URL overrides it.",
    }),
    transport: Type.Optional(
      Type.Unsafe<'streamable_http' | 'sse'>({
        type: 'string',
        enum: ['streamable_http', 'sse'],
        default: 'streamable_http',
        description:
          'streamable_http: a 2026-07-28 (stateless) or 2025-era (sessions) upstream, negotiated; sse: a 2024-11-05 HTTP+SSE upstream.',
      }),
    ),
  },
  {
    ...strict,
    description:
      'The tools come from this upstream MCP server, listed per connection; excludes openapi, tools, plugin and api.',
  },
);

/** The manifest of one provider (`manifests/<id>.yaml`). */
export const ManifestSchema = Type.Object(
  {
    schema_version: Type.Literal(1),
    id: ProviderId,
    display_name: Type.String({ minLength: 1, maxLength: 60 }),
    description: Type.String({
      pattern: '^[^\\n]{1,200}$',
      description: 'One line, at most 200 characters.',
    }),
    docs_url: Type.Optional(HttpsUrl),
    logo_url: Type.Optional(HttpsUrl),
    auth: AuthSchema,
    connection_fields: Type.Optional(
      Type.Record(Name, ConnectionField, {
        ...strict,
        description: 'Non-secret settings of a connection, by name.',
      }),
    ),
    api: Type.Optional(ApiSchema),
    verify: Type.Optional(VerifySchema),
    identity: Type.Optional(IdentitySchema),
    openapi: Type.Optional(OpenApiSchema),
    tools: Type.Optional(Type.Array(InlineTool, { minItems: 1 })),
    mcp: Type.Optional(McpSchema),
    categories: Type.Array(CategorySchema, {
      minItems: 1,
      description: 'Every tool falls in exactly one category.',
    }),
    limits: Type.Optional(Type.Object({ note: Type.String({ minLength: 1 }) }, strict)),
    synonyms: Type.Optional(
      Type.Array(
        Type.Array(SynonymWord, {
          minItems: 2,
          maxItems: 12,
          uniqueItems: true,
          description: 'Words (or short phrases) users say for one another, e.g. [email, mail].',
        }),
        {
          minItems: 1,
          maxItems: 50,
          description:
            "Groups of words search_tools treats as one, where users' words differ from the provider's (e.g. [ticket, issue] for Jira). A group applies to this provider's tools.",
        },
      ),
    ),
    plugin: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9-]{1,30}$',
        description: 'Id of the code plugin in plugins/<id>/.',
      }),
    ),
  },
  {
    ...strict,
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Toolgate provider manifest',
  },
);

export type Manifest = Static<typeof ManifestSchema>;
export type ManifestAuth = Manifest['auth'];
export type ManifestApi = NonNullable<Manifest['api']>;
export type BaseUrlSpec = NonNullable<ManifestApi['base_url']>;
export type ConnectionFieldSpec = NonNullable<Manifest['connection_fields']>[string];
export type OperationSelectorSpec = Static<typeof OperationSelector>;
export type ToolSelectorSpec = Static<typeof ToolSelector>;
export type InlineToolSpec = Static<typeof InlineTool>;
export type OperationOverrideSpec = Static<typeof OperationOverride>;
export type AnnotationsSpec = Static<typeof Annotations>;
export type CategorySpec = Static<typeof CategorySchema>;
export type McpSpec = Static<typeof McpSchema>;

/** The schema as plain JSON, for ajv and for the generated editor schema. */
export function manifestJsonSchema(): TSchema {
  // Round-trip drops TypeBox's symbol-keyed metadata; $schema goes first for readers of the file.
  const { $schema, ...rest } = JSON.parse(JSON.stringify(ManifestSchema)) as TSchema;
  return { $schema, ...rest } as TSchema;
}
