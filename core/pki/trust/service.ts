import { ProblemError } from '../../errors/index.js';
import { view, type CaView } from '../cas/view.js';
import { nameKey, type CaStore } from '../cas/store.js';
import { ChainBuilder, type RevocationCheck } from './builder.js';
import type { ChainProblem, ChainResult } from './model.js';
import { NodeCache, type ChainNode } from './nodes.js';
import { MemorySource, StoreSource } from './sources.js';

/** One CA of the trust chain forest, with its own path to its root and the CAs it issued. */
export interface TrustTreeNode {
  ca: CaView;
  valid: boolean;
  trusted: boolean;
  complete: boolean;
  anchor: string | null;
  /** This CA's path, itself first: each certificate's DN, CA name and problems. */
  path: { dn: string; ca: string | null; problems: ChainProblem[] }[];
  subordinates: TrustTreeNode[];
}

/**
 * Trust chains over the imported CAs: the path of any certificate (the tc decoder, other modules) and the
 * forest of CAs (/api/v1/trustchains). Paths are built afresh on each call from the database (several
 * nodes share it, and a CA changed on one must count on all); parsed certificates and signature checks
 * are cached by content.
 */
export class TrustService {
  readonly nodes = new NodeCache();
  private readonly builder = new ChainBuilder(this.nodes);

  constructor(
    private readonly store: CaStore,
    private readonly clock: () => number,
    private readonly revocation?: RevocationCheck,
  ) {}

  /** The path of `der` (leaf) completed from `extras` (e.g. the rest of a PEM bundle) and the imported CAs. */
  async chainFor(tenant: string, der: Uint8Array, extras: readonly Uint8Array[] = [], at = this.clock()): Promise<ChainResult> {
    const leaf = await this.known(tenant, this.nodes.ofDer(der));
    const others = await Promise.all(extras.map((d) => this.known(tenant, this.nodes.ofDer(d))));
    return this.builder.build(leaf, new StoreSource(tenant, this.store, this.nodes, others), { at, revocation: this.revocation });
  }

  /**
   * Whether a client certificate may log in (spec "X509 certificate" authentication): its issuing CA is
   * imported and flagged trusted for client authentication (that CA anchors the path), and the path up to
   * it has no problem (validity, CA flags, constraints, revocation by the CRL cache).
   */
  async forClientAuth(tenant: string, der: Uint8Array, extras: readonly Uint8Array[] = []): Promise<{ accepted: boolean; ca: string | null; chain: ChainResult }> {
    const leaf = await this.known(tenant, this.nodes.ofDer(der));
    const others = await Promise.all(extras.map((d) => this.known(tenant, this.nodes.ofDer(d))));
    const chain = await this.builder.build(leaf, new StoreSource(tenant, this.store, this.nodes, others), {
      at: this.clock(),
      revocation: this.revocation,
      anchor: (n) => n !== leaf && n.ca?.trustedForClientAuth === true,
    });
    const issuer = chain.path[1];
    const accepted = chain.valid && Boolean(issuer?.ca) && chain.anchor === issuer!.ca;
    return { accepted, ca: issuer?.ca ?? null, chain };
  }

  /**
   * The path of a bundle's leaf (e.g. a tc request): the leaf is the first certificate that issued none
   * of the others, whatever order the bundle is in; the others help complete the path.
   */
  async chainForBundle(tenant: string, ders: readonly Uint8Array[]): Promise<ChainResult> {
    const nodes = ders.map((d) => this.nodes.ofDer(d));
    const issuers = new Set(nodes.map((n) => nameKey(n.info.issuer)));
    const leafAt = Math.max(0, nodes.findIndex((n) => !issuers.has(nameKey(n.info.dn))));
    return this.chainFor(tenant, ders[leafAt]!, ders.filter((_, i) => i !== leafAt));
  }

  /** Every imported CA under the CA that issued it; CAs whose issuer is not imported (roots included) at the top. */
  async forest(tenant: string): Promise<TrustTreeNode[]> {
    const { tops } = await this.grow(tenant);
    return tops;
  }

  /** The tree under one CA, by name (any CA, not only roots). */
  async tree(tenant: string, anchor: string): Promise<TrustTreeNode> {
    const { byName } = await this.grow(tenant);
    const node = byName.get(anchor);
    if (!node) throw new ProblemError('TC-003', { message: `No trust chain starts at "${anchor}": no CA has this name` });
    return node;
  }

  /** A client's certificate that is an imported CA counts as that CA (its flags apply). */
  private async known(tenant: string, node: ChainNode): Promise<ChainNode> {
    const ca = await this.store.byThumbprint(tenant, node.info.thumbprints.sha256);
    return ca ? { ...node, ca } : node;
  }

  private async grow(tenant: string): Promise<{ tops: TrustTreeNode[]; byName: Map<string, TrustTreeNode> }> {
    const cas = await this.store.list(tenant);
    const source = new MemorySource(cas.map((ca) => this.nodes.ofCa(ca)));
    const at = this.clock();
    const byName = new Map<string, TrustTreeNode>();
    const parentOf = new Map<string, string>();
    for (const node of source.nodes) {
      const chain = await this.builder.build(node, source, { at, revocation: this.revocation });
      byName.set(node.ca!.name, {
        ca: view(node.ca!),
        valid: chain.valid,
        trusted: chain.trusted,
        complete: chain.complete,
        anchor: chain.anchor,
        path: chain.path.map((l) => ({ dn: l.certificate.dn, ca: l.ca, problems: l.problems })),
        subordinates: [],
      });
      const issuer = chain.path[1]?.ca;
      if (issuer && issuer !== node.ca!.name) parentOf.set(node.ca!.name, issuer);
    }
    // Attach each CA under its issuer. CAs that issue each other (a loop) have no root: the first of
    // them by name becomes a top, and the walk never attaches a CA twice.
    const placed = new Set<string>();
    const children = new Map<string, string[]>();
    for (const [child, parent] of parentOf) children.set(parent, [...(children.get(parent) ?? []), child]);
    const attach = (name: string): TrustTreeNode => {
      placed.add(name);
      const node = byName.get(name)!;
      for (const child of (children.get(name) ?? []).sort()) if (!placed.has(child)) node.subordinates.push(attach(child));
      return node;
    };
    const names = [...byName.keys()].sort();
    const tops = names.filter((n) => !parentOf.has(n)).map(attach);
    for (const name of names) if (!placed.has(name)) tops.push(attach(name));
    return { tops: tops.sort((a, b) => (a.ca.name < b.ca.name ? -1 : 1)), byName };
  }
}
