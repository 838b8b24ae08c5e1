import type { CatalogSnapshot } from '../catalog/types.js';
import type { ReportRecord, Store } from '../store/types.js';
import type { Caller } from '../auth/caller.js';
import { textResult, type SystemTool } from './types.js';

/** Delivers a filed report to the operator beyond the store (TOOLGATE_REPORT_WEBHOOK_URL). */
export type ReportSink = (report: ReportRecord, caller: Caller) => Promise<void>;

export interface SystemToolDeps {
  catalog: { readonly current: CatalogSnapshot };
  store: Store;
  reportSink?: ReportSink;
  onSinkError: (error: unknown, report: ReportRecord) => void;
}

function listProviders(deps: SystemToolDeps): SystemTool {
  return {
    name: 'list_providers',
    title: 'List providers',
    description:
      "Browse the integrations (providers) this gateway can connect, with each one's id, name, what it does, how it authenticates and its tool categories. Use it when the user asks what integrations are available; then connect one with connect_provider.",
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'Words to match against provider ids, names and descriptions.',
        },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler(args) {
      const query = typeof args.query === 'string' ? args.query.toLowerCase().trim() : '';
      const providers = [...deps.catalog.current.providers.values()].filter(
        (p) => query === '' || `${p.id} ${p.displayName} ${p.description}`.toLowerCase().includes(query),
      );
      if (providers.length === 0) {
        return Promise.resolve(
          textResult(
            query === ''
              ? 'No providers are installed in this gateway yet. The operator adds them as manifests in the catalog.'
              : `No provider matches "${query}". Call list_providers without a query to see them all.`,
          ),
        );
      }
      const lines = providers.map(
        (p) =>
          `- ${p.id}: ${p.displayName} (${p.auth.kind}) — ${p.description} Categories: ${p.categories.map((c) => c.title).join(', ')}.`,
      );
      return Promise.resolve(textResult(`${providers.length} provider(s):\n${lines.join('\n')}`));
    },
  };
}

function reportProblem(deps: SystemToolDeps): SystemTool {
  return {
    name: 'report_problem',
    title: 'Report a problem',
    description:
      'Send a problem report to the operator of this gateway: a tool that fails or misbehaves, a provider that is missing, a confusing result. Give a one-line summary and, if useful, details and the provider or tool concerned. Never include passwords, API keys or tokens.',
    inputSchema: {
      type: 'object',
      properties: {
        summary: {
          type: 'string',
          minLength: 1,
          maxLength: 500,
          description: 'One line saying what went wrong.',
        },
        details: {
          type: 'string',
          maxLength: 10_000,
          description: 'What was tried, what happened, what was expected.',
        },
        provider: { type: 'string', maxLength: 100, description: 'Provider id concerned, if any.' },
        tool: { type: 'string', maxLength: 100, description: 'Tool name concerned, if any.' },
      },
      required: ['summary'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async handler(args, { caller }) {
      const text = (name: string): string | null => {
        const value = args[name];
        return typeof value === 'string' ? value : null;
      };
      const report = await deps.store.insertReport(caller.scope, {
        summary: (text('summary') ?? '').trim(),
        details: text('details'),
        provider: text('provider'),
        tool: text('tool'),
      });
      if (deps.reportSink) {
        // The report is stored already; a failing webhook is the operator's to see, not the agent's.
        deps.reportSink(report, caller).catch((error: unknown) => deps.onSinkError(error, report));
      }
      return textResult(
        `Report ${report.id} was filed and the operator will see it. Quote this id if you follow up.`,
      );
    },
  };
}

/** The system tools, in the order tools/list shows them. */
export function createSystemTools(deps: SystemToolDeps): SystemTool[] {
  return [listProviders(deps), reportProblem(deps)];
}
