import Mustache from 'mustache';
import nodemailer, { type Transporter } from 'nodemailer';
import { defaultEventMessage, definePlugin, eventTemplateView, type DeliveryResult, type TriggerChannel } from '@certwright/sdk';

interface SmtpConfig {
  host: string;
  port?: number;
  secure?: boolean;
  starttls?: 'required' | 'opportunistic' | 'never';
  rejectUnauthorized?: boolean;
  user?: string;
  password?: string;
  from: string;
  clientName?: string;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
}

interface EmailTarget {
  server?: string;
  to: string[];
  cc?: string[];
  subject?: string;
  body?: string;
  html?: string;
}

const ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/;
const plain = String;
// Mustache's own escape also rewrites = / and `, which makes DNs unreadable in the HTML source.
const html = (value: unknown) => String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function transportFor(config: SmtpConfig): Transporter {
  return nodemailer.createTransport({
    host: config.host,
    port: config.port ?? 587,
    secure: config.secure ?? false,
    requireTLS: (config.starttls ?? 'required') === 'required',
    ignoreTLS: config.starttls === 'never',
    tls: { rejectUnauthorized: config.rejectUnauthorized ?? true },
    ...(config.user ? { auth: { user: config.user, pass: config.password ?? '' } } : {}),
    ...(config.clientName ? { name: config.clientName } : {}),
    connectionTimeout: config.connectionTimeoutMs ?? 10_000,
    greetingTimeout: config.greetingTimeoutMs ?? 10_000,
    socketTimeout: config.socketTimeoutMs ?? 30_000,
  });
}

function parses(template: string): boolean {
  try {
    Mustache.parse(template);
    return true;
  } catch {
    return false;
  }
}

/** Rendered recipient templates: split on commas, blanks dropped; throws on something that is not an address. */
function recipients(templates: readonly string[] | undefined, view: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const template of templates ?? []) {
    for (const part of Mustache.render(template, view, {}, { escape: plain }).split(/[,;]/)) {
      const address = part.trim();
      if (!address) continue;
      if (!ADDRESS.test(address)) throw new Error(`recipient "${address}" is not an email address`);
      out.push(address);
    }
  }
  return out;
}

// Codes nodemailer sets without an SMTP answer that retrying cannot fix.
const FINAL_CODES = new Set(['EAUTH', 'EENVELOPE', 'EMESSAGE', 'ETLS', 'EINVALIDINPUT']);

/** SMTP 4xx and connection failures are passing; 5xx and configuration problems are not. */
function failure(err: unknown): DeliveryResult {
  const e = err as { responseCode?: number; code?: string; response?: string; message?: string };
  if (typeof e.responseCode === 'number') {
    return { delivered: false, retryable: e.responseCode < 500, detail: `SMTP ${e.responseCode}${e.code ? ` (${e.code})` : ''}: ${e.message ?? e.response ?? ''}`.trim() };
  }
  return { delivered: false, retryable: !FINAL_CODES.has(e.code ?? ''), detail: `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}` };
}

/** The `email` trigger channel: SMTP through nodemailer, one message per event, Mustache templates. */
export default definePlugin({
  register(ctx) {
    const servers = new Map(ctx.instances.map((i) => [i.name, { config: i.config as unknown as SmtpConfig, transport: transportFor(i.config as unknown as SmtpConfig) }]));
    const first = ctx.instances[0]?.name;
    const channel: TriggerChannel<EmailTarget> = {
      validateTarget(target): target is EmailTarget {
        if (typeof target !== 'object' || target === null) return false;
        const t = target as Partial<EmailTarget>;
        const list = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0 && parses(x));
        if (!list(t.to) || (t.to as string[]).length === 0 || (t.cc !== undefined && !list(t.cc))) return false;
        if (t.server !== undefined && !servers.has(t.server)) return false;
        return [t.subject, t.body, t.html].every((x) => x === undefined || (typeof x === 'string' && parses(x)));
      },
      async send(event, target) {
        const server = servers.get(target.server ?? first ?? '');
        if (!server) return { delivered: false, retryable: false, detail: target.server ? `no email instance named "${target.server}"` : 'no SMTP server configured (plugins.instances.trigger-email)' };
        const view = eventTemplateView(event, ctx.clock.now());
        const render = (template: string, escape: (value: unknown) => string = plain) => Mustache.render(template, view, {}, { escape });
        let to: string[];
        let cc: string[];
        try {
          to = recipients(target.to, view);
          cc = recipients(target.cc, view);
        } catch (err) {
          return { delivered: false, retryable: false, detail: (err as Error).message };
        }
        if (!to.length) return { delivered: false, retryable: false, detail: 'no recipient: every "to" entry rendered empty' };
        try {
          const info = await server.transport.sendMail({
            from: server.config.from,
            to,
            ...(cc.length ? { cc } : {}),
            // Header injection: a rendered subject stays one line.
            subject: render(target.subject ?? '{{message.title}}').replace(/[\r\n]+/g, ' '),
            text: render(target.body ?? '{{message.text}}'),
            ...(target.html ? { html: render(target.html, html) } : {}),
            headers: { 'X-Certwright-Event': event.code, 'X-Certwright-Event-Id': event.id },
          });
          const rejected = (info.rejected ?? []).map(String);
          return { delivered: true, retryable: false, detail: rejected.length ? `accepted; refused recipients: ${rejected.join(', ')}` : `accepted: ${info.response ?? ''}`.trim() };
        } catch (err) {
          return failure(err);
        }
      },
      preview(event) {
        const message = defaultEventMessage(event, ctx.clock.now());
        return `Subject: ${message.title}\n\n${message.text}`;
      },
    };
    // Transports are not pooled: they hold no connection between messages, so stopping needs nothing.
    ctx.registries.triggerChannels.register('email', channel);
  },
});
