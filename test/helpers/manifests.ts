/**
 * Manifests written by tests: the header every manifest starts with (a provider without auth),
 * and the Weather provider of the catalog tests (one inline tool, `weather_current`).
 */

/** A manifest of provider `id` without auth, `body` after its auth (api, tools or openapi, categories). */
export function manifestYaml(id: string, description: string, body: string): string {
  return `# yaml-language-server: $schema=./manifest.schema.json
schema_version: 1
id: ${id}
display_name: ${id.charAt(0).toUpperCase()}${id.slice(1)}
description: ${description}
auth:
  kind: none
${body}`;
}

/** The Weather provider: `weather_current`, then the inline tools of `extraTools`. */
export function weatherManifest(extraTools = ''): string {
  return manifestYaml(
    'weather',
    'Current conditions for a city.',
    `api:
  base_url: https://api.weather.example
tools:
  - name: weather_current
    description: Current conditions for a city.
    input_schema:
      type: object
      properties:
        city: { type: string }
      required: [city]
    request: { method: GET, path: /current, query: [city] }
${extraTools}categories:
  - { id: weather, title: Weather, match: [{ name: "weather_*" }] }
`,
  );
}
