/**
 * A provider whose one tool calls `GET /wait` on its base URL: pointed at a loopback server that
 * holds the request, it makes a call stay in flight for as long as a test needs (shutdown tests).
 */
export const SLOWPOKE_MANIFEST = `# yaml-language-server: $schema=./manifest.schema.json
schema_version: 1
id: slowpoke
display_name: Slowpoke
description: Answers when the test says so.
auth: { kind: none }
api: { base_url: https://slow.example }
tools:
  - name: slowpoke_wait
    description: Waits for the upstream.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /wait }
categories:
  - { id: all, title: All, tools: [slowpoke_wait] }
`;
