/**
 * The two halves of `name@host` for a pod without the annotation for that half:
 * - name: spec.naming.basename when set (libcluster's kubernetes_node_basename), else metadata.name;
 * - host, by spec.naming.hostFallback:
 *   PodIP     status.podIP;
 *   PodDNS    the pod's A record, `<IP with dashes>.<namespace>.pod.<clusterDomain>`
 *             (IPv6 in its dashed form: `fd00::1` → `fd00--1`);
 *   Hostname  `<spec.hostname or metadata.name>.<spec.subdomain>.<namespace>.svc.<clusterDomain>`,
 *             the stable name a StatefulSet pod has under its headless Service.
 * Pure: the pod's facts and the settings in, a value or the missing field out.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { PodFacts } from './pod-fields.js';
import { DEFAULT_CLUSTER_DOMAIN, type HostFallback, type NamingSettings } from './types.js';

export type FallbackHost =
  | { ok: true; host: string; source: HostFallback }
  | { ok: false; missing: 'metadata.namespace' | 'spec.subdomain'; fallback: HostFallback };

export function fallbackName(facts: PodFacts, settings: NamingSettings): { name: string; basename: boolean } {
  return settings.basename !== undefined
    ? { name: settings.basename, basename: true }
    : { name: facts.name, basename: false };
}

/**
 * Fields the host fallback needs that the pod lacks, checked before the pod's IP (a missing
 * subdomain is the pod's configuration; a missing IP is a moment in its life).
 */
export function missingForHost(facts: PodFacts, settings: NamingSettings): FallbackHost | undefined {
  const fallback = settings.hostFallback ?? 'PodIP';
  if (fallback === 'PodIP') return undefined;
  if (fallback === 'Hostname' && facts.subdomain === '')
    return { ok: false, missing: 'spec.subdomain', fallback };
  if (facts.namespace === '') return { ok: false, missing: 'metadata.namespace', fallback };
  return undefined;
}

/**
 * The host part without an annotation; call after missingForHost found nothing, with an IP.
 * Undefined for PodDNS when status.podIP is not an IP address (only input read from a file can
 * hold one): no A record exists for it.
 */
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** A dotted IPv4 address as node:net's isIPv4 accepts it (no leading zeros). */
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

export function fallbackHost(facts: PodFacts, settings: NamingSettings): string | undefined {
  const domain = settings.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  switch (settings.hostFallback ?? 'PodIP') {
    case 'PodIP':
      return facts.podIP;
    case 'PodDNS': {
      // IPv4 first, by a pattern: node:net's isIP costs more than the rest of naming a pod.
      const ip = facts.podIP;
      if (IPV4.test(ip)) return `${ip.replaceAll('.', '-')}.${facts.namespace}.pod.${domain}`;
      return isIP(ip) ? `${dashedIP(ip)}.${facts.namespace}.pod.${domain}` : undefined;
    }
    case 'Hostname':
      return `${facts.hostname || facts.name}.${facts.subdomain}.${facts.namespace}.svc.${domain}`;
  }
}

/**
 * An IP address as one DNS label: IPv4 dots and IPv6 colons become dashes. An IPv6 address
 * is written in its shortest form (RFC 5952); an elided run at either end gets a 0 so the
 * label neither starts nor ends with a dash (`::1` → `0--1`), which reads back as the same
 * address. Anything that is not an IP is returned with its dots and colons dashed, and the
 * node-name check then names the problem.
 */
export function dashedIP(ip: string): string {
  if (isIPv4(ip)) return ip.replaceAll('.', '-');
  if (!isIPv6(ip)) return ip.replaceAll('.', '-').replaceAll(':', '-');
  let dashed = shortestIPv6(ip).replaceAll(':', '-');
  if (dashed.startsWith('-')) dashed = `0${dashed}`;
  if (dashed.endsWith('-')) dashed = `${dashed}0`;
  return dashed;
}

/** Eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(ip: string): number[] {
  let text = ip.split('%', 1)[0]!.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // A dotted IPv4 tail is the last two groups.
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const gap = text.indexOf('::');
  if (gap < 0) return parse(text);
  const head = parse(text.slice(0, gap));
  const rest = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

function shortestIPv6(ip: string): string {
  const groups = ipv6Groups(ip);
  // The longest run of two or more zero groups (the first of equals) becomes ::.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}
