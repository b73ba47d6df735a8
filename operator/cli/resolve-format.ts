/**
 * Output of `ctopo resolve`: a table for people and a JSON document for programs.
 *
 * The table has two sections. PEERS: NODE NAME, POD, IP, HOST FROM, NAME FROM, and the member
 * state READY, SERVING, TERMINATING (EndpointSlice vocabulary; - when unknown);
 * EXCLUDED: POD, REASON, MESSAGE. Columns are padded to their widest cell and separated by
 * three spaces; the last column is not padded. A section without rows says so in one line.
 * Cells never carry control characters (pod names from a file could hold terminal escapes).
 *
 * The JSON is exactly `{"peers":[…],"excluded":[…]}` on one line, peers with all their fields
 * (the status's Peer, ready and serving last)
 * and exclusions with pod, reason, message — in that order, nothing else.
 */
import { sanitizeCell } from '../naming/quote.js';
import type { ResolveResult } from '../naming/index.js';
import type { ExcludedPod, Peer } from '../api/types.generated.js';

const GAP = '   ';

const yesNo = (b: boolean | undefined) => (b === undefined ? '-' : b ? 'yes' : 'no');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cells = [header, ...rows.map((r) => r.map(sanitizeCell))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => r[c]!.length)));
  return cells.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join(GAP)
      .trimEnd(),
  );
}

/** Peers as `ctopo resolve` finds them, or as a status lists them (- for what a large topology's leaves out). */
export function formatResolveTable(result: {
  peers: readonly Peer[];
  excluded: readonly ExcludedPod[];
}): string {
  const lines: string[] = [];
  lines.push(`PEERS (${result.peers.length})`);
  if (result.peers.length === 0) lines.push('no peers');
  else
    lines.push(
      ...table(
        ['NODE NAME', 'POD', 'IP', 'HOST FROM', 'NAME FROM', 'READY', 'SERVING', 'TERMINATING'],
        result.peers.map((p) => [
          p.nodeName,
          p.pod,
          p.podIP ?? '-',
          p.hostSource ?? '-',
          p.nameSource ?? '-',
          yesNo(p.ready),
          yesNo(p.serving),
          yesNo(p.terminating),
        ]),
      ),
    );
  lines.push('');
  lines.push(`EXCLUDED (${result.excluded.length})`);
  if (result.excluded.length === 0) lines.push('no excluded pods');
  else
    lines.push(
      ...table(
        ['POD', 'REASON', 'MESSAGE'],
        result.excluded.map((e) => [e.pod, e.reason, e.message]),
      ),
    );
  return `${lines.join('\n')}\n`;
}

export function formatResolveJson(result: ResolveResult): string {
  return JSON.stringify({
    peers: result.peers.map((p) => ({
      nodeName: p.nodeName,
      pod: p.pod,
      uid: p.uid,
      podIP: p.podIP,
      node: p.node,
      hostSource: p.hostSource,
      nameSource: p.nameSource,
      terminating: p.terminating,
      ready: p.ready,
      serving: p.serving,
    })),
    excluded: result.excluded.map((e) => ({ pod: e.pod, reason: e.reason, message: e.message })),
  });
}
