import { isIPv4, isIPv6 } from 'node:net';

/**
 * The grammar a distributed node name must satisfy before anything uses it — the operator
 * publishing it, or a connector passing it to `erl_call`:
 *
 * - `name@host`, at most 255 characters in all;
 * - name: one or more of `A–Z a–z 0–9 _ -`;
 * - host: an RFC 1123 DNS name (labels of 1–63 letters, digits or `-`, not starting or
 *   ending with `-`; 253 characters at most), an IPv4 address or an IPv6 address (without a
 *   zone ID such as `%eth0`: an interface of one host means nothing to another).
 *
 * The OTP library applies the same grammar (clients/cluster_topology/src/cluster_topology_name.erl); a test
 * holds the two to the same verdict and problem. Nothing else passes, so a value from a pod annotation can never carry quoting, shell or
 * Erlang term syntax to the places a node name goes.
 */
export const MAX_NODE_NAME_LENGTH = 255;

const NAME_PART = /^[A-Za-z0-9_-]+$/;
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

const ZONE_PROBLEM =
  'the host part (after @) is an IPv6 address with a zone ID (such as %eth0), which no other node can use';

export type NodeNameCheck = { ok: true } | { ok: false; problem: string };

export function isDnsName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  return host.split('.').every((label) => DNS_LABEL.test(label));
}

export function checkNamePart(name: string): NodeNameCheck {
  if (name.length === 0) return { ok: false, problem: 'the name part (before @) is empty' };
  if (!NAME_PART.test(name))
    return { ok: false, problem: 'the name part (before @) may only hold letters, digits, _ and -' };
  return { ok: true };
}

export function checkHostPart(host: string): NodeNameCheck {
  if (host.length === 0) return { ok: false, problem: 'the host part (after @) is empty' };
  // Only an IPv6 address holds a colon; the cheap DNS check goes first (node:net's IP checks cost
  // more than the rest of naming a pod).
  if (!host.includes(':')) {
    if (isDnsName(host) || isIPv4(host)) return { ok: true };
  } else {
    const zone = host.indexOf('%');
    if (zone < 0 && isIPv6(host)) return { ok: true };
    if (zone >= 0 && isIPv6(host.slice(0, zone))) return { ok: false, problem: ZONE_PROBLEM };
  }
  return { ok: false, problem: 'the host part (after @) is neither a DNS name (RFC 1123) nor an IP address' };
}

export function checkNodeName(nodeName: string): NodeNameCheck {
  if (nodeName.length > MAX_NODE_NAME_LENGTH)
    return { ok: false, problem: `longer than ${MAX_NODE_NAME_LENGTH} characters` };
  const at = nodeName.indexOf('@');
  if (at < 0) return { ok: false, problem: 'no @ between name and host' };
  const name = checkNamePart(nodeName.slice(0, at));
  if (!name.ok) return name;
  return checkHostPart(nodeName.slice(at + 1));
}

export function isValidNodeName(nodeName: string): boolean {
  return checkNodeName(nodeName).ok;
}
