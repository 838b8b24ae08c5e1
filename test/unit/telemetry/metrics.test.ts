import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics, type ToolOutcome } from '../../../core/telemetry/metrics.js';

const NAME = 'toolgate_tool_call_duration_seconds';

/** The lines of one metric in an exposition text. */
function section(text: string): string[] {
  return text.split('\n').filter((line) => line.includes(NAME));
}

describe('the tool call histogram', () => {
  it("exposes what prom-client's Histogram exposes for the same observations", async () => {
    const metrics = new Metrics();
    const registry = new Registry();
    const reference = new Histogram({
      name: NAME,
      help: 'Tool calls by provider, tool and outcome, with their latency; _count is the number of calls.',
      labelNames: ['provider', 'tool', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    const calls: [string, string, ToolOutcome, number][] = [
      ['github', 'github_get_user', 'ok', 0.0042],
      ['github', 'github_get_user', 'ok', 0.005],
      ['github', 'github_get_user', 'tool_error', 0.3],
      ['slack', 'slack_post "quoted" \\ name', 'ok', 31],
      ['github', 'github_get_user', 'ok', 0.75],
      ['(system)', 'list_providers', 'ok', 0],
      ['slack', 'slack_post "quoted" \\ name', 'ok', Number.NaN],
    ];
    for (const [provider, tool, outcome, seconds] of calls) {
      metrics.toolCall(provider, tool, outcome, seconds);
      if (Number.isFinite(seconds)) reference.labels(provider, tool, outcome).observe(seconds);
    }
    const ours = section((await metrics.exposition()).text);
    expect(ours).toEqual(section(await registry.metrics()));
    expect(ours.length).toBeGreaterThan(4 * 15);
    expect(await metrics.registry.getMetricsAsJSON()).toContainEqual(
      JSON.parse(JSON.stringify((await registry.getMetricsAsJSON())[0])),
    );
  });
});
