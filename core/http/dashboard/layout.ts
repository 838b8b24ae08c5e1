import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Finding } from '../../catalog/types.js';
import { formatFindings } from '../../catalog/index.js';
import { InputError } from '../../admin/input.js';
import type { AdminOperations } from '../../admin/operations.js';
import { html, htmlDocument, sendPage, type Html } from '../html.js';
import { csrfInput } from './csrf.js';

// The sections of the top navigation, in order.
const SECTIONS = {
  keys: 'API keys',
  organizations: 'Organizations',
  reports: 'Reports',
  catalog: 'Catalog',
  connections: 'Connections',
  activity: 'Activity',
} as const;

export type Section = keyof typeof SECTIONS;

// Dashboard rules on top of the shared stylesheet (html.ts): same colours, fonts and controls.
const STYLE = `
.top{background:#111827}.top .in{max-width:1180px;margin:0 auto;padding:0 24px;display:flex;align-items:center;gap:24px;min-height:56px;flex-wrap:wrap}
.top .logo{color:#fff;font-weight:700;text-decoration:none;letter-spacing:.2px}
.top nav{display:flex;gap:4px;flex:1;flex-wrap:wrap}.top nav a{color:#d1d5db;text-decoration:none;padding:6px 12px;border-radius:6px;font-size:14px}
.top nav a:hover{color:#fff}.top nav a[aria-current=page]{background:#374151;color:#fff}
.top form{margin:0}.top form button{width:auto;margin:0;background:none;border:1px solid #4b5563;color:#d1d5db;padding:5px 12px;font-size:14px}
main.dash{max-width:1180px;margin:28px auto;padding:0 24px;background:none;border:0;box-shadow:none}
main.dash h1{font-size:24px;margin:0 0 4px}.lead{color:var(--muted);margin:0 0 20px}
.card{background:#fff;border:1px solid var(--line);border-radius:12px;padding:20px 24px;margin:0 0 20px}
.card h2{font-size:17px;margin:0 0 12px}.card h2.sub{margin-top:22px}.toolbar{margin:0 0 20px}td .badge+form{margin-top:8px}.card h2 .muted{font-weight:400}
main.dash button{width:auto;margin-top:0;padding:8px 16px;font-size:14px;border:1px solid transparent}
main.dash select{background:#fff}
main.dash label{margin:0 0 4px;font-size:14px}
main.dash button.secondary{background:#fff;color:var(--ink);border-color:#d1d5db}main.dash button.danger{background:var(--bad)}
a.button{display:inline-block;padding:8px 16px;border-radius:8px;border:1px solid #d1d5db;color:var(--ink);text-decoration:none;font-size:14px;background:#fff}
.row{display:flex;gap:12px;align-items:flex-end;flex-wrap:wrap}.row>div{flex:1;min-width:200px}.row>.actions{flex:0 0 auto;min-width:0}
.row>.actions button,.row>.actions a.button{padding:10px 18px;font-size:15px;line-height:1.5}.row:has(.field-error)>.actions{margin-bottom:24px}
.stack>div{margin:0 0 14px}
table{width:100%;border-collapse:collapse;font-size:14px}
th{text-align:left;color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.4px;border-bottom:1px solid var(--line);padding:8px 10px}
td{padding:10px;border-bottom:1px solid #f1f5f9;vertical-align:top}tr:last-child td{border-bottom:0}
td form{margin:0}td code{white-space:nowrap}.table{overflow-x:auto}
.badge{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.ok{background:#d1fae5;color:#065f46}.badge.bad{background:#fee2e2;color:#991b1b}.badge.warn{background:#fef3c7;color:#92400e}.badge.off{background:#f3f4f6;color:#4b5563}
.notice{background:#ecfdf5;border:1px solid #a7f3d0;color:#065f46;padding:10px 14px;border-radius:8px;margin:0 0 20px}
.warning{background:#fffbeb;border:1px solid #fde68a;color:#92400e;padding:10px 14px;border-radius:8px;margin:0 0 16px}
.field-error{color:var(--bad);font-size:13px;margin-top:4px}input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad)}
.empty{text-align:center;padding:24px;color:var(--muted);border:1px dashed #d1d5db;border-radius:10px;background:#fcfcfd}
.empty strong{display:block;color:var(--ink);margin-bottom:4px}
pre{background:#0f172a;color:#e2e8f0;padding:14px 16px;border-radius:8px;overflow:auto;font-size:13px;margin:8px 0;white-space:pre-wrap;overflow-wrap:anywhere}
.secret{display:flex;gap:8px;align-items:center}.secret code{flex:1;font-size:15px;padding:10px 12px;background:#f3f4f6;border:1px solid var(--line);border-radius:8px;word-break:break-all}
.tabs{display:flex;gap:6px;margin:0 0 14px}.tabs a{padding:6px 12px;border-radius:999px;text-decoration:none;color:var(--muted);border:1px solid var(--line);font-size:14px;background:#fff}
.tabs a[aria-current=page]{background:var(--ink);color:#fff;border-color:var(--ink)}
.split{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:28px}@media(max-width:900px){.split{grid-template-columns:1fr}}
.preview-label{font-size:12px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted);font-weight:600;margin:0 0 6px}
.consent-preview{border:1px solid var(--line);border-radius:12px;padding:24px;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.06)}
.consent-preview h1{font-size:22px}main.dash .consent-preview button{width:100%;margin-top:24px;padding:11px;font-size:15px}
ul.tools{columns:2;margin:6px 0}ul.tools li{break-inside:avoid}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:6px 18px;font-size:14px;margin:0}.meta dt{color:var(--muted)}.meta dd{margin:0}
a{color:var(--accent)}`;

// Copy buttons (`data-copy="<element id>"`): the only script of the dashboard, allowed by its hash. Without
// the asynchronous clipboard (plain http on another host), it selects the text and asks the browser to copy
// it; failing that, the text stays selected for Ctrl+C.
const COPY_SCRIPT = `function copy(button){var target=document.getElementById(button.getAttribute('data-copy'));var done=function(){button.textContent='Copied'};var select=function(){var range=document.createRange();range.selectNodeContents(target);var s=getSelection();s.removeAllRanges();s.addRange(range);button.textContent=document.execCommand('copy')?'Copied':'Press Ctrl+C'};if(navigator.clipboard){navigator.clipboard.writeText(target.textContent).then(done,select)}else{select()}}document.querySelectorAll('[data-copy]').forEach(function(b){b.addEventListener('click',function(){copy(b)})});`;

/** What every dashboard route works with: the operations, where the dashboard lives, how to answer. */
export interface Dashboard {
  ops: AdminOperations;
  /** The dashboard's public path (the base URL's path + /dashboard), for links and forms. */
  root: string;
  baseUrl: string;
  manifestsDir: string;
}

export interface PageOptions {
  status?: number;
  /** CSS rules of this page only. */
  style?: string;
  /** Include the copy-button script. */
  copy?: boolean;
}

/** Sends one page of a section: its document title (before ` · Toolgate`), its body, its options. */
export type SectionPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  title: string,
  body: Html,
  options?: PageOptions,
) => FastifyReply;

/**
 * How the routes of one section send their pages. Each route module binds its section once, so its
 * pages cannot land under another tab and no call repeats the dashboard and the section.
 */
export function sectionPage(dashboard: Dashboard, section: Section): SectionPage {
  return (request, reply, title, body, options) =>
    sendDashboardPage(dashboard, request, reply, section, title, body, options);
}

// A page of the signed-in dashboard: top navigation with its section marked, the page's body, the
// sign-out form.
function sendDashboardPage(
  dashboard: Dashboard,
  request: FastifyRequest,
  reply: FastifyReply,
  section: Section,
  title: string,
  body: Html,
  options: PageOptions = {},
): FastifyReply {
  const { root } = dashboard;
  const nav = Object.entries(SECTIONS).map(
    ([id, label]) =>
      html`<a href="${root}/${id}" ${id === section ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  const document = htmlDocument(
    `${title} · Toolgate`,
    html`<header class="top">
        <div class="in">
          <a class="logo" href="${root}/keys">Toolgate</a>
          <nav aria-label="Dashboard">${nav}</nav>
          ${form(request, `${root}/sign-out`, html`<button type="submit">Sign out</button>`)}
        </div>
      </header>
      <main class="dash">${body}</main>`,
    { style: STYLE + (options.style ?? ''), ...(options.copy ? { script: COPY_SCRIPT } : {}) },
  );
  return sendDashboardDocument(reply, options.status ?? 200, document, options.copy ? [COPY_SCRIPT] : []);
}

/**
 * Sends any dashboard document (signed in or not). Its forms are posted with their real Origin
 * (referrer policy same-origin), which the host guard checks: no dashboard URL carries a secret.
 */
export function sendDashboardDocument(
  reply: FastifyReply,
  status: number,
  document: string,
  scripts: readonly string[] = [],
): FastifyReply {
  return sendPage(reply, status, document, { scripts, referrerPolicy: 'same-origin' });
}

/** A POST form of the signed-in dashboard, with the session's CSRF token. */
export function form(
  request: FastifyRequest,
  action: string,
  content: Html,
  attributes: Html = html``,
): Html {
  return html`<form method="post" action="${action}" ${attributes}>
    ${csrfInput(request.dashboardSession?.csrfToken ?? '')}${content}
  </form>`;
}

export interface FieldOptions {
  name: string;
  /** Element id, unique in the page (default `f-<name>`: pages with several forms of one kind set it). */
  id?: string;
  label: string;
  hint?: string | undefined;
  value?: string | undefined;
  type?: string;
  error?: string | undefined;
  required?: boolean;
  placeholder?: string;
  /** Extra attributes (pattern, autocomplete…). */
  attributes?: Html;
}

/** A labelled input with its hint and, after a refused submit, its error beside it. */
export function field(options: FieldOptions): Html {
  const id = options.id ?? `f-${options.name}`;
  return html`<div>
    <label for="${id}"
      >${options.label}${options.hint ? html`<span class="hint">${options.hint}</span>` : ''}</label
    >
    <input
      id="${id}"
      name="${options.name}"
      type="${options.type ?? 'text'}"
      value="${options.value ?? ''}"
      ${options.required ? html`required` : ''}
      ${options.placeholder ? html`placeholder="${options.placeholder}"` : ''}
      ${options.error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}
      ${options.attributes ?? ''}
    />
    ${fieldError(id, options.error)}
  </div>`;
}

/** A labelled select of `[value, label]` choices. */
export function select(options: {
  name: string;
  label: string;
  choices: readonly (readonly [string, string])[];
  value?: string | undefined;
  error?: string | undefined;
}): Html {
  const id = `f-${options.name}`;
  return html`<div>
    <label for="${id}">${options.label}</label>
    <select
      id="${id}"
      name="${options.name}"
      ${options.error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}
    >
      ${options.choices.map(
        ([value, label]) =>
          html`<option value="${value}" ${value === options.value ? html` selected` : ''}>${label}</option>`,
      )}
    </select>
    ${fieldError(id, options.error)}
  </div>`;
}

function fieldError(id: string, error: string | undefined): Html {
  return error ? html`<div class="field-error" id="${id}-error" role="alert">${error}</div>` : html``;
}

/** A table, or the empty state (saying what to do) when there are no rows. */
export function table(headers: readonly (string | Html)[], rows: readonly Html[], empty: Html): Html {
  if (rows.length === 0) return html`<div class="empty">${empty}</div>`;
  return html`<div class="table">
    <table>
      <thead>
        <tr>
          ${headers.map((h) => html`<th>${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

export function badge(kind: 'ok' | 'bad' | 'warn' | 'off', text: string): Html {
  return html`<span class="badge ${kind}">${text}</span>`;
}

/** An ISO time as the operator reads it (UTC, to the minute or second), the exact time in the markup. */
export function time(iso: string | null, seconds = false): Html {
  if (iso === null) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}" title="${iso}"
    >${iso.slice(0, seconds ? 19 : 16).replace('T', ' ')} UTC</time
  >`;
}

/** `1 tool`, `2 tools`. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** Findings one a line, as `toolgate catalog validate` prints them. */
export function findingsBlock(findings: readonly Finding[]): Html {
  return findings.length > 0 ? html`<pre>${formatFindings(findings)}</pre>` : html``;
}

/** A notice after a redirect, when the page was asked for with one. */
export function notice(text: string | undefined): Html {
  return text ? html`<div class="notice" role="status">${text}</div>` : html``;
}

/** Runs an operation; a refused field comes back as the error to show beside it, anything else throws. */
export async function attempt<T>(action: () => Promise<T>): Promise<{ value: T } | { error: InputError }> {
  try {
    return { value: await action() };
  } catch (error) {
    if (error instanceof InputError) return { error };
    throw error;
  }
}

/** Field errors of a refused form, by field name. */
export type FieldErrors = Partial<Record<string, string>>;

export function errorsOf(error: InputError): FieldErrors {
  return { [error.field]: error.message };
}
