/**
 * Anchor ids of the cookbook's objects: `<type>-<name>` with only [A-Za-z0-9_-] (what every AsciiDoc
 * backend accepts as an id), starting with a letter so that they never meet the ids Asciidoctor derives
 * from section titles (`_http_proxies`). Names that sanitize alike get `-2`, `-3`… so that no id is
 * assigned twice (a processor warning, and a link to the wrong object).
 */
export class AnchorIds {
  private readonly byObject = new Map<string, string>();
  private readonly taken = new Set<string>();

  private static sanitize(type: string, name: string): string {
    const id = `${type}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
    return /^[A-Za-z]/.test(id) ? id : `x-${id}`;
  }

  private static key(type: string, name: string): string {
    return JSON.stringify([type, name]);
  }

  /** Assigns the id of an object (call once per object, in document order). */
  assign(type: string, name: string): string {
    const base = AnchorIds.sanitize(type, name);
    let id = base;
    for (let n = 2; this.taken.has(id); n++) id = `${base}-${n}`;
    this.taken.add(id);
    this.byObject.set(AnchorIds.key(type, name), id);
    return id;
  }

  /** The id of an object in the document, or undefined (not included: its section is not readable). */
  of(type: string, name: string): string | undefined {
    return this.byObject.get(AnchorIds.key(type, name));
  }
}
