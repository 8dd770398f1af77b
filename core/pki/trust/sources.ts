import { nameKey, type CaRecord, type CaStore } from '../cas/store.js';
import type { IssuerSource } from './builder.js';
import type { ChainNode, NodeCache } from './nodes.js';

/** Nodes by the key of their subject, one entry per distinct certificate (an imported CA wins over a copy). */
function bySubject(nodes: Iterable<ChainNode>): Map<string, ChainNode[]> {
  const out = new Map<string, ChainNode[]>();
  for (const node of nodes) {
    const key = nameKey(node.info.dn);
    const list = out.get(key) ?? [];
    const same = list.findIndex((n) => n.info.thumbprints.sha256 === node.info.thumbprints.sha256);
    if (same === -1) list.push(node);
    else if (!list[same]!.ca && node.ca) list[same] = node;
    out.set(key, list);
  }
  return out;
}

/** Every imported CA of a tenant, loaded once (the trust chain forest is built from all of them). */
export class MemorySource implements IssuerSource {
  private readonly index: Map<string, ChainNode[]>;
  constructor(readonly nodes: readonly ChainNode[]) {
    this.index = bySubject(nodes);
  }
  candidates(subject: ChainNode): Promise<ChainNode[]> {
    return Promise.resolve(this.index.get(nameKey(subject.info.issuer)) ?? []);
  }
}

/**
 * The imported CAs read as needed (one index read per issuer name) plus certificates the caller supplied
 * (the rest of a PEM bundle): a chain of three costs two reads, whatever the number of CAs.
 */
export class StoreSource implements IssuerSource {
  private readonly extras: Map<string, ChainNode[]>;
  private readonly seen = new Map<string, Promise<ChainNode[]>>();

  constructor(
    private readonly tenant: string,
    private readonly store: CaStore,
    private readonly nodes: NodeCache,
    extras: readonly ChainNode[] = [],
  ) {
    this.extras = bySubject(extras);
  }

  candidates(subject: ChainNode): Promise<ChainNode[]> {
    const key = nameKey(subject.info.issuer);
    let found = this.seen.get(key);
    if (!found) {
      found = this.store.bySubject(this.tenant, subject.info.issuer).then((cas: CaRecord[]) => {
        const merged = bySubject([...(this.extras.get(key) ?? []), ...cas.map((ca) => this.nodes.ofCa(ca))]);
        return merged.get(key) ?? [];
      });
      this.seen.set(key, found);
    }
    return found;
  }
}
