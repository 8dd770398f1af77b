import type { ReportParameters } from './parameters.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The message of a link report: the task's body (or a default one) followed by the link and until when it
 * works. The link is always added, so a custom body cannot leave it out; it needs a sign-in (core/reports).
 */
export function linkMessage(p: ReportParameters, taskName: string, matched: string, link: string, expiresAt: number): { text: string } | { html: string } {
  const until = new Date(expiresAt).toISOString();
  if (p.isHtml && p.body) return { html: `${p.body}\n<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a> (sign-in required; available until ${until})</p>` };
  const intro = p.body ?? `The report "${taskName}" is ready: ${matched}.`;
  return { text: `${intro}\n\nDownload it (sign-in required; available until ${until}):\n${link}\n` };
}
