import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Scope } from '../domain.js';

/** Markup that is already safe; anything else interpolated into `html` is escaped. */
export class Html {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.html;
  if (Array.isArray(value)) return (value as readonly Value[]).map(render).join('');
  return escapeHtml(String(value));
}

/** A template tag that escapes every interpolated value unless it is Html. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? '')));
  return new Html(out);
}

const STYLE = `
:root{--accent:#4f46e5;--ink:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#f9fafb;--bad:#b91c1c;--good:#047857}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:560px;margin:48px auto;padding:32px;background:#fff;border:1px solid var(--line);border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.06)}
h1{font-size:22px;margin:0 0 8px}p{margin:8px 0}.muted{color:var(--muted);font-size:14px}
label{display:block;font-weight:600;margin:18px 0 4px}.hint{font-weight:400;color:var(--muted);font-size:13px;display:block}
input,select{width:100%;padding:10px 12px;border:1px solid #d1d5db;border-radius:8px;font:inherit}input:focus,select:focus{outline:2px solid var(--accent);border-color:transparent}
button{margin-top:24px;width:100%;padding:11px;border:0;border-radius:8px;background:var(--accent);color:#fff;font:600 15px system-ui,sans-serif;cursor:pointer}
button.secondary{margin-top:8px;background:#fff;color:var(--ink);border:1px solid #d1d5db}
.error{background:#fef2f2;border:1px solid #fecaca;color:var(--bad);padding:10px 12px;border-radius:8px;margin:16px 0}
.ok{color:var(--good)}.brand{display:flex;align-items:center;gap:12px;margin-bottom:16px}.brand img{width:40px;height:40px;border-radius:8px;object-fit:contain}
ul{padding-left:20px}code{background:#f3f4f6;padding:1px 5px;border-radius:4px}`;

/** `selector{--accent:…}` for a colour like #1a73e8, or nothing for anything else (it lands in CSS). */
export function accentRule(selector: string, accent: string | undefined): string {
  return accent && /^#[0-9a-f]{3,8}$/i.test(accent) ? `${selector}{--accent:${accent}}` : '';
}

/**
 * A complete, self-contained document: the shared stylesheet plus a page's own rules, no external
 * asset. An inline script must also be passed to `sendPage` (its hash goes into the CSP); `head` is
 * markup added to the head as it is (escape what it carries).
 */
export function htmlDocument(
  title: string,
  body: Html,
  options: { style?: string; script?: string; head?: string } = {},
): string {
  const script = options.script === undefined ? '' : `<script>${options.script}</script>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${options.head ?? ''}<title>${escapeHtml(title)}</title><style>${STYLE}${options.style ?? ''}</style></head><body>${body.html}${script}</body></html>`;
}

/** A one-card page (connect, consent, sign-in), optionally in an organization's accent colour. */
export function page(title: string, body: Html, accent?: string): string {
  return htmlDocument(title, html`<main>${body}</main>`, { style: accentRule(':root', accent) });
}

/**
 * Sends a page with headers for pages that carry one-time tokens or secrets: nothing cached, no
 * referrer by default (a token may be in the URL), no framing, and no script but the inline ones
 * named here (allowed by their hash, never by 'unsafe-inline').
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  document: string,
  options: {
    /** Origins a form of this page may lead to besides this one (a form posted here may redirect there). */
    formTargets?: readonly string[];
    /** The exact source of each inline script of the page. */
    scripts?: readonly string[];
    /**
     * 'same-origin' for pages without a token in their URL whose forms are checked for their Origin
     * (the dashboard): under 'no-referrer' a browser posts their forms with `Origin: null`.
     */
    referrerPolicy?: 'no-referrer' | 'same-origin';
  } = {},
): FastifyReply {
  const forms = (options.formTargets ?? []).map((o) => ` ${o}`).join('');
  const scripts = (options.scripts ?? []).map(
    (source) => ` 'sha256-${createHash('sha256').update(source).digest('base64')}'`,
  );
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', options.referrerPolicy ?? 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; img-src https: data:;${scripts.length > 0 ? ` script-src${scripts.join('')};` : ''} form-action 'self'${forms}; frame-ancestors 'none'`,
    )
    .send(document);
}

/** The page of a one-time link that expired or was used (connect and OAuth start links). */
export const LINK_GONE = page(
  'Link expired',
  html`<h1>This link has expired or was already used</h1>
    <p>
      Links to connect a provider work once and for ten minutes. Ask your agent to connect the provider again
      for a new link.
    </p>`,
);

/** Whom a connection is for, in the words of the connect pages. */
export function whoFor(scope: Scope): string {
  if (scope.userId === null) return 'your account';
  return scope.orgId === null ? `user ${scope.userId}` : `user ${scope.userId} of ${scope.orgId}`;
}
