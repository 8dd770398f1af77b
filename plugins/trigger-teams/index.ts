import Mustache from 'mustache';
import { defaultEventMessage, definePlugin, egressPolicyFrom, eventTemplateView, postJson, type CertwrightEvent, type TriggerChannel } from '@certwright/sdk';

type TeamsFormat = 'adaptive-card' | 'message-card';
interface TeamsTarget {
  url: string;
  text?: string;
  format?: TeamsFormat;
}

const THEME: Record<CertwrightEvent['status'], string> = { success: '2EB67D', warning: 'FFB900', failure: 'D13438' };

/** What Teams Workflows webhooks take: a message activity carrying one Adaptive Card. */
export function adaptiveCardMessage(title: string | null, text: string | null, facts: { name: string; value: string }[]): object {
  const body: object[] = [];
  if (title) body.push({ type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true });
  if (text) body.push({ type: 'TextBlock', text, wrap: true });
  if (facts.length) body.push({ type: 'FactSet', facts: facts.map((f) => ({ title: f.name, value: f.value })) });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body },
      },
    ],
  };
}

/** What legacy Office 365 connector webhooks take (summary or text is required). */
export function messageCard(event: CertwrightEvent, title: string, text: string | null, facts: { name: string; value: string }[]): object {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: title,
    themeColor: THEME[event.status] ?? THEME.success,
    title,
    ...(text ? { text } : {}),
    ...(facts.length ? { sections: [{ facts }] } : {}),
  };
}

function parses(template: string): boolean {
  try {
    Mustache.parse(template);
    return true;
  } catch {
    return false;
  }
}

/** The `teams` trigger channel: Adaptive Card (Workflows) or MessageCard (legacy connectors) messages. */
export default definePlugin({
  register(ctx) {
    const policy = egressPolicyFrom(ctx.instances[0]?.config);
    const channel: TriggerChannel<TeamsTarget> = {
      validateTarget(target): target is TeamsTarget {
        if (typeof target !== 'object' || target === null) return false;
        const t = target as Partial<TeamsTarget>;
        if (typeof t.url !== 'string' || !/^https?:\/\//.test(t.url)) return false;
        if (t.format !== undefined && t.format !== 'adaptive-card' && t.format !== 'message-card') return false;
        return t.text === undefined || (typeof t.text === 'string' && parses(t.text));
      },
      async send(event, target) {
        const now = ctx.clock.now();
        const message = defaultEventMessage(event, now);
        const text = target.text ? Mustache.render(target.text, eventTemplateView(event, now), {}, { escape: String }) : null;
        // A template replaces the facts; the title stays (the card's summary needs one).
        const facts = text ? [] : message.facts;
        const body = target.format === 'message-card' ? messageCard(event, message.title, text, facts) : adaptiveCardMessage(text ? null : message.title, text, facts);
        return postJson(ctx.http, target.url, body, { policy });
      },
      preview(event) {
        return defaultEventMessage(event, ctx.clock.now()).text;
      },
    };
    ctx.registries.triggerChannels.register('teams', channel);
  },
});
