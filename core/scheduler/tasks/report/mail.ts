import nodemailer, { type Transporter } from 'nodemailer';
import type { CertwrightConfig } from '../../../config/index.js';

/** The plugin whose instances are the platform's SMTP servers (plugins/trigger-email/manifest.json). */
const EMAIL_PLUGIN = 'trigger-email';

interface SmtpConfig {
  host: string;
  port?: number;
  secure?: boolean;
  starttls?: 'required' | 'opportunistic' | 'never';
  rejectUnauthorized?: boolean;
  user?: string;
  password?: string;
  clientName?: string;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
}

/**
 * A transport to the first SMTP server of the email trigger channel, or why there is none. SMTP servers are
 * configured once, as that plugin's instances (the email triggers' default is the first too); the options
 * mean what its manifest says (starttls required unless told otherwise). A core service cannot import a
 * plugin's code, hence the few lines read again here. Read at each run: no connection is held in between.
 */
export function smtpTransport(config: CertwrightConfig): { transport: Transporter } | { missing: string } {
  if (config.plugins.disabled.includes(EMAIL_PLUGIN)) return { missing: `no SMTP server: the ${EMAIL_PLUGIN} plugin is disabled` };
  const smtp = config.plugins.instances[EMAIL_PLUGIN]?.[0]?.config as SmtpConfig | undefined;
  if (!smtp?.host) return { missing: `no SMTP server configured (plugins.instances.${EMAIL_PLUGIN})` };
  return {
    transport: nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port ?? 587,
      secure: smtp.secure ?? false,
      requireTLS: (smtp.starttls ?? 'required') === 'required',
      ignoreTLS: smtp.starttls === 'never',
      tls: { rejectUnauthorized: smtp.rejectUnauthorized ?? true },
      ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
      ...(smtp.clientName ? { name: smtp.clientName } : {}),
      connectionTimeout: smtp.connectionTimeoutMs ?? 10_000,
      greetingTimeout: smtp.greetingTimeoutMs ?? 10_000,
      socketTimeout: smtp.socketTimeoutMs ?? 30_000,
    }),
  };
}
