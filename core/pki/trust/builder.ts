import { checkPath } from './checks.js';
import type { ChainLink, ChainProblem, ChainResult } from './model.js';
import type { ChainNode, NodeCache } from './nodes.js';

/** Where issuer candidates come from: certificates whose subject is the given certificate's issuer. */
export interface IssuerSource {
  candidates(subject: ChainNode): Promise<ChainNode[]>;
}

/** Revocation of a certificate by its issuer, when known (the CRL cache). */
export type RevocationCheck = (subject: ChainNode, issuer: ChainNode) => Promise<{ revoked: true; reason: string | null; date: number } | null>;

export interface BuildOptions {
  at: number;
  revocation?: RevocationCheck;
  /** Which CAs anchor a path: those flagged `trusted` unless said otherwise (client authentication). */
  anchor?: (node: ChainNode) => boolean;
}

/** Longest path tried: real hierarchies have 2 to 4 levels; this bounds a hostile or looping CA set. */
const MAX_DEPTH = 10;
/** Paths explored per build, alternatives included (several issuers with one name, cross-certificates). */
const MAX_TRIES = 64;

interface Ending {
  problem: ChainProblem | null;
}

/**
 * Builds the path of a certificate up to a self-signed one, depth first over the issuer candidates:
 * the candidates named as the issuer are ranked (AKI = SKI first, then valid at `at`, then newest) and a
 * candidate is taken only if its key verifies the signature. A candidate already in the path is a loop,
 * never followed. The first valid path wins; otherwise the best one found (trusted, complete, fewest
 * problems), with the reason it ends where it does.
 */
export class ChainBuilder {
  constructor(private readonly nodes: NodeCache) {}

  async build(leaf: ChainNode, source: IssuerSource, options: BuildOptions): Promise<ChainResult> {
    // Written from the nested walk: a holder, so the compiler does not narrow it to its initial null.
    const state: { tries: number; best: ChainResult | null } = { tries: 0, best: null };
    const walk = async (path: ChainNode[]): Promise<ChainResult | null> => {
      const last = path[path.length - 1]!;
      let ending: Ending | null = null;
      if (last.info.selfSigned) ending = { problem: null };
      else if (path.length >= MAX_DEPTH) ending = { problem: { code: 'too-long', message: `the path is longer than ${MAX_DEPTH} certificates` } };
      let next: ChainNode[] = [];
      if (!ending) {
        const found = await this.issuers(last, path, source, options.at);
        next = found.next;
        if (next.length === 0) ending = { problem: found.problem };
      }
      if (ending) {
        state.tries++;
        const result = await this.evaluate(path, ending.problem, options);
        if (!state.best || score(result) > score(state.best)) state.best = result;
        return result.valid ? result : null;
      }
      for (const issuer of next) {
        if (state.tries >= MAX_TRIES) break;
        const found = await walk([...path, issuer]);
        if (found) return found;
      }
      return null;
    };
    return (await walk([leaf])) ?? state.best!;
  }

  /** The verified issuers of `subject` not already in the path, best first; or why there is none. */
  private async issuers(subject: ChainNode, path: ChainNode[], source: IssuerSource, at: number): Promise<{ next: ChainNode[]; problem: ChainProblem }> {
    const aki = subject.info.extensions.authorityKeyIdentifier?.keyIdentifier?.toLowerCase();
    const rank = (c: ChainNode): number[] => {
      const ski = c.info.extensions.subjectKeyIdentifier?.toLowerCase();
      const keyMatch = aki && ski ? (aki === ski ? 0 : 2) : 1;
      const current = at >= c.info.notBefore && at <= c.info.notAfter ? 0 : 1;
      return [keyMatch, current, -c.info.notBefore];
    };
    const candidates = (await source.candidates(subject))
      .map((c) => ({ c, r: rank(c) }))
      .sort((a, b) => a.r[0]! - b.r[0]! || a.r[1]! - b.r[1]! || a.r[2]! - b.r[2]!)
      .map(({ c }) => c);
    const inPath = new Set(path.map((n) => n.info.thumbprints.sha256));
    const verified = candidates.filter((c) => this.nodes.signedBy(subject, c));
    const next = verified.filter((c) => !inPath.has(c.info.thumbprints.sha256));
    const issuer = `"${subject.info.issuer}"`;
    let problem: ChainProblem;
    if (verified.length > 0) {
      const again = verified[0]!;
      problem = { code: 'loop', message: `its issuer "${again.info.dn}"${again.ca ? ` (CA "${again.ca.name}")` : ''} is already in the path: the certificates issue each other in a loop` };
    } else if (candidates.length > 0) {
      problem = { code: 'signature', message: `the signature does not verify with the key of any of the ${candidates.length} certificate(s) named ${issuer}` };
    } else {
      problem = { code: 'incomplete', message: `its issuer ${issuer} is not among the imported CAs` };
    }
    return { next, problem };
  }

  private async evaluate(path: ChainNode[], ending: ChainProblem | null, options: BuildOptions): Promise<ChainResult> {
    const top = path.length - 1;
    const isAnchor = options.anchor ?? ((n: ChainNode) => n.ca?.trusted === true);
    const anchorAt = path.findIndex(isAnchor);
    const trusted = anchorAt !== -1;
    const problems = checkPath(path, trusted ? anchorAt : top, options.at);
    if (ending) problems[top]!.push(ending);
    if (!trusted) {
      const root = path[top]!.info;
      const message = root.selfSigned ? `the root "${root.dn}" is not flagged trusted, nor is any CA below it` : 'no CA of the path is flagged trusted';
      problems[top]!.push({ code: 'untrusted', message });
    }
    if (options.revocation) {
      for (let i = 0; i < (trusted ? anchorAt : top); i++) {
        const status = await options.revocation(path[i]!, path[i + 1]!);
        if (status) {
          const reason = status.reason ? ` (${status.reason})` : '';
          problems[i]!.push({ code: 'revoked', message: `"${path[i]!.info.dn}" was revoked on ${new Date(status.date).toISOString()}${reason}` });
        }
      }
    }
    const links: ChainLink[] = path.map((n, i) => ({ certificate: n.info, ca: n.ca?.name ?? null, problems: problems[i]! }));
    return {
      path: links,
      complete: path[top]!.info.selfSigned,
      trusted,
      anchor: trusted ? path[anchorAt]!.ca!.name : null,
      valid: links.every((l) => l.problems.length === 0),
    };
  }
}

/** Orders failing paths: trusted, then complete, then fewer problems, then longer. */
function score(r: ChainResult): number {
  const problems = r.path.reduce((n, l) => n + l.problems.length, 0);
  return (r.valid ? 1e6 : 0) + (r.trusted ? 1e5 : 0) + (r.complete ? 1e4 : 0) - problems * 100 + r.path.length;
}
