/**
 * Computation rules on a profile's template elements (issue 30 item 5): a subject element, a SAN type, a label,
 * the owner, team or contact email may carry a `computationRule` (core/templatestring's language) that computes
 * its value from the request when it is submitted — the CSR's subject and SANs, the submitted template, the
 * requester, and datasource records through Lookup. What a rule computes then goes through the element's checks
 * like a submitted value (regex, mandatory, min/max): template.ts decides where it stands among the submitted,
 * CSR and default values.
 */
import { ProblemError } from '../errors/index.js';
import { evaluateTemplate, lookupsIn, parseTemplate, TemplateError, type Dictionary, type LookupTables, type Node, type Value } from '../templatestring/evaluate.js';
import { templateProblem } from '../templatestring/routes.js';
import { dnElementsOf, submittedValues } from './template.js';
import { elementNameOf } from './model.js';
import type { CertificateProfile, CsrFacts, SanRule } from './types.js';

/** The values the profile's rules computed for one request, by element. */
export interface ComputedValues {
  subject: Map<string, string>;
  sans: Map<SanRule['type'], string[]>;
  labels: Map<string, string | null>;
  owner?: string | null;
  team?: string | null;
  contactEmail?: string | null;
}

interface RuleSite {
  where: string;
  text: string;
  apply(out: ComputedValues, value: Value): void;
}

const single = (value: Value): string | null => (value === null ? null : typeof value === 'string' ? value : (value[0] ?? null));
const list = (value: Value): string[] => (value === null ? [] : typeof value === 'string' ? [value] : value);

/** Every rule of the profile, where it stands and what its value sets. */
function sitesOf(profile: CertificateProfile): RuleSite[] {
  const sites: RuleSite[] = [];
  profile.subject.forEach((rule, i) => {
    if (!rule.computationRule) return;
    const element = elementNameOf(rule.element)?.element ?? rule.element;
    sites.push({ where: `subject[${i}] (${element})`, text: rule.computationRule, apply: (out, v) => void out.subject.set(element, single(v) ?? '') });
  });
  profile.sans.forEach((rule, i) => {
    if (rule.computationRule) sites.push({ where: `sans[${i}] (${rule.type})`, text: rule.computationRule, apply: (out, v) => void out.sans.set(rule.type, list(v)) });
  });
  profile.labels.forEach((rule, i) => {
    if (rule.computationRule) sites.push({ where: `labels[${i}] (${rule.label})`, text: rule.computationRule, apply: (out, v) => void out.labels.set(rule.label, single(v)) });
  });
  for (const key of ['owner', 'team', 'contactEmail'] as const) {
    const text = profile[key].computationRule;
    if (text) sites.push({ where: key, text, apply: (out, v) => void (out[key] = single(v)) });
  }
  return sites;
}

/** Parsed rules by text: a profile's rules are parsed once, not on every submit (bounded; cleared when full). */
const parsed = new Map<string, Node>();
function ruleTree(text: string): Node {
  let node = parsed.get(text);
  if (!node) {
    node = parseTemplate(text, 'rule');
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(text, node);
  }
  return node;
}

/** Whether any element of the profile computes its value. */
export const hasComputationRules = (profile: CertificateProfile): boolean => sitesOf(profile).length > 0;

/** A rule as a profile stores it: PRF-002 naming the element and the position when it does not parse. */
export function checkComputationRule(where: string, text: string | null | undefined): void {
  if (!text) return;
  try {
    parseTemplate(text, 'rule');
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    const at = err.positionIn(text);
    throw new ProblemError('PRF-002', { detail: `${where}.computationRule: ${err.message} (line ${at.line}, column ${at.column})` });
  }
}

/** The datasources the profile's rules read (their Lookup calls): what to load before computing. */
export function datasourcesOf(profile: CertificateProfile): string[] {
  return [...new Set(sitesOf(profile).flatMap((s) => lookupsIn(ruleTree(s.text))))];
}

/** What the rules read: `csr.*`, `template.*`, `requester.*`, `profile`, `workflow`. */
export interface ComputationInput {
  csr?: CsrFacts;
  template: Record<string, unknown>;
  requester: { identifier: string; name?: string | null; email?: string | null };
  profile: string;
  workflow: string;
}

/** Lower-case attribute → values, the dictionary's shape of a subject (`csr.subject.cn`). */
function subjectData(elements: readonly { element: string; value: string }[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of elements) {
    const attribute = e.element.replace(/\.\d+$/, '').toLowerCase();
    (out[attribute] ??= []).push(e.value);
  }
  return out;
}

/** The submitted template as the rules read it: `template.subject.cn`, `template.san.dnsname`, `template.labels.<name>`, `template.owner`. */
function templateData(template: Record<string, unknown>): Dictionary {
  const sent = submittedValues(template);
  const out: Dictionary = {
    subject: subjectData([...sent.subject].filter((e): e is [string, string] => e[1] !== null).map(([element, value]) => ({ element, value }))),
    san: Object.fromEntries([...sent.sans].map(([type, values]) => [type.toLowerCase(), values.filter((v) => v !== '')])),
    labels: Object.fromEntries([...sent.labels].filter((e) => e[1] !== null)),
  };
  for (const key of ['owner', 'team', 'contactEmail'] as const) if (typeof sent[key] === 'string') out[key] = sent[key];
  return out;
}

function dataOf(input: ComputationInput): Dictionary {
  const csr = input.csr;
  const csrData: Dictionary | undefined = csr
    ? {
        subject: subjectData(csr.dnElements ?? dnElementsOf(csr.subject)),
        san: csr.sans.reduce<Record<string, string[]>>((acc, s) => ((acc[s.sanType.toLowerCase()] ??= []).push(s.value), acc), {}),
        keytype: csr.keyType,
        dn: csr.subject,
      }
    : undefined;
  return {
    ...(csrData ? { csr: csrData } : {}),
    template: templateData(input.template),
    requester: { identifier: input.requester.identifier, name: input.requester.name ?? null, email: input.requester.email ?? null },
    profile: input.profile,
    workflow: input.workflow,
  };
}

/**
 * Runs every rule of the profile on the request: the values they computed, or the rule's problem (TPL-001/2/3,
 * its position, the element in `detail`). `lookups`: the datasources the rules read, loaded beforehand.
 */
export function computeValues(profile: CertificateProfile, input: ComputationInput, options: { now: () => number; lookups?: LookupTables }): ComputedValues {
  const out: ComputedValues = { subject: new Map(), sans: new Map(), labels: new Map() };
  const sites = sitesOf(profile);
  if (sites.length === 0) return out;
  const data = dataOf(input);
  for (const site of sites) {
    let node: Node;
    try {
      node = ruleTree(site.text);
      site.apply(out, evaluateTemplate(node, data, { now: options.now, ...(options.lookups ? { lookups: options.lookups } : {}) }));
    } catch (err) {
      if (err instanceof TemplateError) throw templateProblem(err, site.text, `the computation rule of ${site.where} on profile ${profile.name}`);
      throw err;
    }
  }
  return out;
}
