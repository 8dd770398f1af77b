/** A granted permission (DESIGN.md §3): the filter, a certificate query, narrows what it covers. */
export interface Permission {
  value: string;
  filter?: string;
}

/** Granting the key also grants the value: write ⇒ read, direct ⇒ request. */
const IMPLIED_BY: Record<string, string> = { read: 'write', request: 'direct' };

function matches(granted: readonly string[], required: readonly string[]): boolean {
  for (let i = 0; i < granted.length; i++) {
    const g = granted[i]!;
    // A trailing `*` covers every remaining segment; `*` elsewhere covers exactly one.
    if (g === '*' && i === granted.length - 1) return required.length > i;
    const r = required[i];
    if (r === undefined) return false;
    if (g !== '*' && g !== r && IMPLIED_BY[r] !== g) return false;
  }
  return granted.length === required.length;
}

/**
 * The permissions of one principal (its own plus its roles'), parsed once when the principal is
 * resolved so each check is a few string comparisons.
 */
export class PermissionSet {
  private readonly parsed: { segments: string[]; permission: Permission }[];

  constructor(readonly permissions: readonly Permission[]) {
    this.parsed = permissions.map((permission) => ({ segments: permission.value.split(':'), permission }));
  }

  /** Whether some granted permission covers `required` (filters aside). */
  allows(required: string): boolean {
    const segments = required.split(':');
    for (const p of this.parsed) if (matches(p.segments, segments)) return true;
    return false;
  }

  /**
   * The filters that narrow `required`: `null` when a covering permission has no filter (everything),
   * else the filters of the covering permissions (any of them admits an object), or `[]` when nothing
   * covers it. The inventory combines them with `or`.
   */
  filtersFor(required: string): string[] | null {
    const segments = required.split(':');
    const filters: string[] = [];
    for (const p of this.parsed) {
      if (!matches(p.segments, segments)) continue;
      if (p.permission.filter === undefined || p.permission.filter === '') return null;
      filters.push(p.permission.filter);
    }
    return filters;
  }

  /** Whether any granted permission starts with a group (e.g. any `configuration:` right). */
  hasAnyIn(prefix: string): boolean {
    return this.parsed.some((p) => p.segments[0] === '*' || p.segments[0] === prefix);
  }
}
