import Mustache from 'mustache';
import { defaultEventMessage, definePlugin, egressPolicyFrom, eventTemplateView, postJson, type CertwrightEvent, type TriggerChannel } from '@certwright/sdk';

interface MattermostTarget {
  url: string;
  text?: string;
  username?: string;
  iconUrl?: string;
  channel?: string;
}

/** Mattermost's default text (Markdown): a bold title, then one line per fact. */
export function mattermostText(event: CertwrightEvent, now: number): string {
  const message = defaultEventMessage(event, now);
  return [`**${message.title}**`, ...message.facts.map((f) => `- **${f.name}:** ${f.value}`)].join('\n');
}

function parses(template: string): boolean {
  try {
    Mustache.parse(template);
    return true;
  } catch {
    return false;
  }
}

const optionalString = (v: unknown) => v === undefined || (typeof v === 'string' && v.length > 0);

/** The `mattermost` trigger channel: Mattermost incoming webhooks ({text, username?, icon_url?, channel?}). */
export default definePlugin({
  register(ctx) {
    const policy = egressPolicyFrom(ctx.instances[0]?.config);
    const channel: TriggerChannel<MattermostTarget> = {
      validateTarget(target): target is MattermostTarget {
        if (typeof target !== 'object' || target === null) return false;
        const t = target as Partial<MattermostTarget>;
        if (typeof t.url !== 'string' || !/^https?:\/\//.test(t.url)) return false;
        if (!optionalString(t.username) || !optionalString(t.channel) || !optionalString(t.iconUrl)) return false;
        if (t.iconUrl !== undefined && !/^https?:\/\//.test(t.iconUrl)) return false;
        return t.text === undefined || (typeof t.text === 'string' && parses(t.text));
      },
      async send(event, target) {
        const now = ctx.clock.now();
        const text = target.text ? Mustache.render(target.text, eventTemplateView(event, now), {}, { escape: String }) : mattermostText(event, now);
        const body = {
          text,
          ...(target.username ? { username: target.username } : {}),
          ...(target.iconUrl ? { icon_url: target.iconUrl } : {}),
          ...(target.channel ? { channel: target.channel } : {}),
        };
        return postJson(ctx.http, target.url, body, { policy });
      },
      preview(event) {
        return mattermostText(event, ctx.clock.now());
      },
    };
    ctx.registries.triggerChannels.register('mattermost', channel);
  },
});
