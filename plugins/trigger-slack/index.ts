import Mustache from 'mustache';
import { defaultEventMessage, definePlugin, egressPolicyFrom, eventTemplateView, postJson, type CertwrightEvent, type TriggerChannel } from '@certwright/sdk';

interface SlackTarget {
  url: string;
  text?: string;
}

/** Slack mrkdwn needs &, < and > escaped; anything else in a value is shown as typed. (Mustache hands numbers too.) */
const slackEscape = (value: unknown) => String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack's default message: a title section and the facts as fields (a section holds at most 10). */
export function slackMessage(event: CertwrightEvent, now: number): { text: string; blocks: object[] } {
  const message = defaultEventMessage(event, now);
  const fields = message.facts.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: `*${slackEscape(f.name)}*\n${slackEscape(f.value)}` }));
  return {
    text: slackEscape(message.title),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${slackEscape(message.title)}*` } },
      ...(fields.length ? [{ type: 'section', fields }] : []),
    ],
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

/** The `slack` trigger channel: Slack incoming webhooks ({text, blocks}) through the egress check. */
export default definePlugin({
  register(ctx) {
    const policy = egressPolicyFrom(ctx.instances[0]?.config);
    const channel: TriggerChannel<SlackTarget> = {
      validateTarget(target): target is SlackTarget {
        if (typeof target !== 'object' || target === null) return false;
        const t = target as Partial<SlackTarget>;
        if (typeof t.url !== 'string' || !/^https?:\/\//.test(t.url)) return false;
        return t.text === undefined || (typeof t.text === 'string' && parses(t.text));
      },
      async send(event, target) {
        const now = ctx.clock.now();
        const body = target.text
          ? { text: Mustache.render(target.text, eventTemplateView(event, now), {}, { escape: slackEscape }) }
          : slackMessage(event, now);
        return postJson(ctx.http, target.url, body, { policy });
      },
      preview(event) {
        return defaultEventMessage(event, ctx.clock.now()).text;
      },
    };
    ctx.registries.triggerChannels.register('slack', channel);
  },
});
