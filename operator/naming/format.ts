/**
 * Output of `ctopo resolve`: a table for people and a JSON document for programs.
 *
 * The table has two sections. PEERS: NODE NAME, POD, IP, HOST FROM, NAME FROM, TERMINATING;
 * EXCLUDED: POD, REASON, MESSAGE. Columns are padded to their widest cell and separated by
 * three spaces; the last column is not padded. A section without rows says so in one line.
 * Cells never carry control characters (pod names from a file could hold terminal escapes).
 *
 * The JSON is exactly `{"peers":[…],"excluded":[…]}` on one line, peers with all their fields
 * and exclusions with pod, reason, message — in that order, nothing else.
 */
import { sanitizeCell } from './quote.js';
import type { ResolveResult } from './types.js';

const GAP = '   ';

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

export function formatResolveTable(result: ResolveResult): string {
  const lines: string[] = [];
  lines.push(`PEERS (${result.peers.length})`);
  if (result.peers.length === 0) lines.push('no peers');
  else
    lines.push(
      ...table(
        ['NODE NAME', 'POD', 'IP', 'HOST FROM', 'NAME FROM', 'TERMINATING'],
        result.peers.map((p) => [
          p.nodeName,
          p.pod,
          p.podIP,
          p.hostSource,
          p.nameSource,
          p.terminating ? 'yes' : 'no',
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
    })),
    excluded: result.excluded.map((e) => ({ pod: e.pod, reason: e.reason, message: e.message })),
  });
}
