import { readFile } from 'node:fs/promises';
import { checkNodeName } from '../naming/node-name.js';
import { writeFileAtomic } from './connectors/file.js';

/**
 * What the agent connected, kept in a small file so that it survives the agent's own restart
 * (`--state-file`, on a volume that outlives the container). Without it a restarted agent starts
 * with nothing remembered and can never disconnect a peer that was removed while it was down: it
 * only disconnects nodes it knows it connected.
 *
 * The file holds every node the agent MAY hold: before a round it is widened by the nodes the
 * round is about to connect (so an agent killed mid-round still knows them), after the round it is
 * what the agent holds plus the connects that failed (a call that timed out may have connected).
 * A node named there that the application does not hold costs one harmless disconnect later.
 *
 *     {"version":1,"topology":"<namespace>/<name>","connected":["a@10.0.0.1", …]}
 */

export interface Remembered {
  readonly nodes: readonly string[];
  /** Why what was in the file was not taken (missing file: no problem, nothing remembered). */
  readonly problem?: string;
}

export interface AgentMemory {
  load(): Promise<Remembered>;
  /** Writes the set if it differs from what was last written or read. */
  save(nodes: readonly string[]): Promise<void>;
}

const VERSION = 1;

/** Reads the text of a state file: the nodes it names, or why it was not usable. Pure. */
export function parseState(text: string, topology: string): Remembered {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { nodes: [], problem: `not JSON: ${(e as Error).message}` };
  }
  const d = doc as { version?: unknown; topology?: unknown; connected?: unknown } | null;
  if (!d || typeof d !== 'object' || d.version !== VERSION || !Array.isArray(d.connected))
    return { nodes: [], problem: `not a version ${VERSION} agent state ({"version":1,"connected":[…]})` };
  if (d.topology !== topology)
    return { nodes: [], problem: `it belongs to topology ${JSON.stringify(d.topology)}, not ${topology}` };
  const nodes: string[] = [];
  const bad: string[] = [];
  for (const n of d.connected)
    if (typeof n === 'string' && checkNodeName(n).ok) nodes.push(n);
    else bad.push(JSON.stringify(n).slice(0, 80));
  return bad.length
    ? { nodes, problem: `entries that are not node names were left out: ${bad.join(', ')}` }
    : { nodes };
}

export function renderState(nodes: readonly string[], topology: string): string {
  return `${JSON.stringify({ version: VERSION, topology, connected: [...new Set(nodes)].sort() })}\n`;
}

export function fileMemory(path: string, topology: string): AgentMemory {
  let last: string | undefined;
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { nodes: [] };
        return { nodes: [], problem: `cannot read it: ${(e as Error).message}` };
      }
      const r = parseState(text, topology);
      if (!r.problem) last = renderState(r.nodes, topology);
      return r;
    },
    async save(nodes) {
      const text = renderState(nodes, topology);
      if (text === last) return;
      await writeFileAtomic(path, text, 0o600);
      last = text;
    },
  };
}
