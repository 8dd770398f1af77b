/**
 * Horizon's `authorizationLevels` ⇄ Certwright's `authorizations`. Horizon gives each action an access level:
 * `authenticated` (any signed-in principal), `authorized` (a permission is needed) or `everyone` (anonymous).
 * Certwright's lists name principals, roles and teams, `*` meaning any authenticated principal; lifecycle
 * permissions always apply. So an action is `authenticated` exactly when its list holds `*`, else
 * `authorized`; the mapping only adds or removes `*` and keeps every other entry (which Horizon cannot say).
 *
 * - enroll / revoke / update / recover / migrate / renew ⇄ workflows.<w>.direct; request<W> ⇄ .request.
 * - approve<W> ⇄ approve: Certwright has one approver list for every workflow, so the approve levels sent
 *   must agree with each other (refused otherwise).
 * - enrollApi / renewApi / recoverApi: Certwright does not tell API calls from others: answered as the
 *   action's own level, refused when sent different from it.
 * - search / auditRequest: who sees certificates and requests is a matter of permissions in Certwright:
 *   answered `authorized`, refused otherwise.
 * - `everyone` and enforcedIdentityProviders are refused: every lifecycle call is authenticated, by any provider.
 */
import type { ProfileAuthorizations, Workflow } from '../types.js';
import { invalid, only, type Json } from './common.js';

type Access = 'everyone' | 'authenticated' | 'authorized';
export interface AuthorizationLevel {
  accessLevel: Access;
  enforcedIdentityProviders?: unknown[] | null;
}

/** The workflows Horizon has levels for (it has none for import, which keeps Certwright's lists). */
const LIFECYCLE = ['enroll', 'revoke', 'update', 'recover', 'migrate', 'renew'] as const satisfies readonly Workflow[];
const WITH_API: ReadonlySet<string> = new Set(['enroll', 'recover', 'renew']);
const FIXED = ['search', 'auditRequest'] as const;
const cap = (w: string): string => w[0]!.toUpperCase() + w.slice(1);

/** Every action of CertificateProfileAuthorizationLevels, in Horizon's order. */
export const ACTIONS: readonly string[] = [
  ...LIFECYCLE.flatMap((w) => [w, ...(WITH_API.has(w) ? [`${w}Api`] : []), `request${cap(w)}`, `approve${cap(w)}`]),
  ...FIXED,
];

const levelOf = (list: readonly string[] | undefined): AuthorizationLevel => ({ accessLevel: list?.includes('*') ? 'authenticated' : 'authorized' });

export function levelsOf(authorizations: ProfileAuthorizations): Record<string, AuthorizationLevel> {
  const out: Record<string, AuthorizationLevel> = {};
  for (const w of LIFECYCLE) {
    const rights = authorizations.workflows[w];
    out[w] = levelOf(rights?.direct);
    if (WITH_API.has(w)) out[`${w}Api`] = levelOf(rights?.direct);
    out[`request${cap(w)}`] = levelOf(rights?.request);
    out[`approve${cap(w)}`] = levelOf(authorizations.approve);
  }
  for (const action of FIXED) out[action] = { accessLevel: 'authorized' };
  return out;
}

/** Whether the action asks for any authenticated principal (true), a grant (false), or says nothing (undefined). */
function wants(sent: Json, action: string): boolean | undefined {
  const level = sent[action] as AuthorizationLevel | null | undefined;
  if (level === undefined || level === null) return undefined;
  const where = `authorizationLevels.${action}`;
  if (level.accessLevel === 'everyone') throw invalid(`${where}.accessLevel: everyone (anonymous) is not supported: Certwright serves lifecycle calls to authenticated principals only (authenticated or authorized)`);
  only(`${where}.enforcedIdentityProviders`, level.enforcedIdentityProviders, undefined, 'Certwright does not restrict an action to identity providers');
  return level.accessLevel === 'authenticated';
}

/** `*` added to or removed from a list; a list that did not exist is only created to hold `*`. */
function withStar(list: string[] | undefined, on: boolean): string[] | undefined {
  if (on) return [...new Set([...(list ?? []), '*'])];
  return list?.filter((entry) => entry !== '*');
}

export function applyLevels(sent: Json, current: ProfileAuthorizations): ProfileAuthorizations {
  const workflows = structuredClone(current.workflows);
  const set = (w: Workflow, slot: 'direct' | 'request', on: boolean | undefined): void => {
    if (on === undefined) return;
    const list = withStar(workflows[w]?.[slot], on);
    if (list === undefined) return;
    workflows[w] = { ...workflows[w], [slot]: list };
  };
  for (const w of LIFECYCLE) {
    const own = wants(sent, w);
    const api = WITH_API.has(w) ? wants(sent, `${w}Api`) : undefined;
    if (own !== undefined && api !== undefined && own !== api) {
      throw invalid(`authorizationLevels.${w}Api: Certwright does not tell API calls from others: it must have the access level of authorizationLevels.${w}`);
    }
    set(w, 'direct', own ?? api);
    set(w, 'request', wants(sent, `request${cap(w)}`));
  }
  const approves = LIFECYCLE.map((w) => [`approve${cap(w)}`, wants(sent, `approve${cap(w)}`)] as const).filter(([, on]) => on !== undefined);
  if (new Set(approves.map(([, on]) => on)).size > 1) {
    throw invalid(`authorizationLevels.${approves.map(([a]) => a).join(', ')}: Certwright has one approver list for every workflow: the approve levels must be the same`);
  }
  const approve = approves.length > 0 ? withStar(current.approve, approves[0]![1]!)! : current.approve;
  for (const action of FIXED) {
    const level = sent[action] as AuthorizationLevel | null | undefined;
    only(`authorizationLevels.${action}.accessLevel`, level?.accessLevel, 'authorized', 'who sees certificates and requests is set by permissions in Certwright (authorized)');
  }
  return { ...current, workflows, approve };
}
