import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { checkNodeName } from '../../naming/node-name.js';
import {
  invalidNameResult,
  type BatchResults,
  type ConnectResult,
  type Connector,
  type ConnectorAction,
  type ConnectorDefinition,
  type ListResult,
} from './types.js';

/**
 * The file connector keeps the current peer list in a file, for an application that reads it
 * (and, e.g., reloads on change). "Connect" adds a node, "disconnect" removes it, and the whole
 * list is rewritten atomically: a temporary file in the same directory is written, fsynced, and
 * renamed over the target (then the directory is fsynced), so a reader sees either the old list
 * or the new one, never a part. Formats: `lines` (one node per line, sorted) or `json`
 * (`{"peers":[...]}`, sorted).
 *
 * The list starts empty and the file is not touched until the first change; `applyRound` writes
 * a whole round in one go, so readers never see the half-way state of a round. Changes are
 * serialized; a change whose write fails is not kept in memory either.
 */

export interface FileConnectorConfig {
  readonly kind: 'file';
  /** Absolute path of the peer-list file. */
  readonly path: string;
  readonly format: 'lines' | 'json';
  /** File mode of the written file. Default 0o644. */
  readonly mode?: number;
}

export interface FileConnectorDeps {
  /** Observes each atomic write: the temporary file and the target it was renamed to. */
  readonly onWrite?: (info: { tempPath: string; path: string; peers: readonly string[] }) => void;
}

export class FileConfigError extends Error {}

export function renderPeerFile(peers: readonly string[], format: 'lines' | 'json'): string {
  const sorted = [...peers].sort();
  if (format === 'json') return `${JSON.stringify({ peers: sorted })}\n`;
  return sorted.map((p) => `${p}\n`).join('');
}

let tempCounter = 0;

/** Writes `content` to `path` atomically: temp file in the same directory, fsync, rename, fsync dir. */
export async function writeFileAtomic(
  path: string,
  content: string,
  mode: number,
  onTemp?: (tempPath: string) => void,
): Promise<void> {
  const dir = dirname(path);
  tempCounter += 1;
  const tempPath = join(dir, `.${basename(path)}.${process.pid}.${tempCounter}.tmp`);
  const fh = await open(tempPath, 'wx', mode);
  try {
    await fh.writeFile(content, 'utf8');
    await fh.chmod(mode); // the umask may have narrowed the mode given to open
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tempPath).catch(() => {});
    throw e;
  }
  await fh.close();
  onTemp?.(tempPath);
  try {
    await rename(tempPath, path);
  } catch (e) {
    await unlink(tempPath).catch(() => {});
    throw e;
  }
  // Make the rename itself durable. Some file systems refuse fsync on a directory; the rename
  // has happened anyway, so that is not an error.
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // best effort
  }
}

export interface FileConnector extends Connector {
  readonly kind: 'file';
  readonly path: string;
  applyRound(ops: { disconnect: readonly string[]; connect: readonly string[] }): Promise<BatchResults>;
  connected(): Promise<ListResult>;
}

export function createFileConnector(
  config: FileConnectorConfig,
  deps: FileConnectorDeps = {},
): FileConnector {
  if (!isAbsolute(config.path))
    throw new FileConfigError(`path ${JSON.stringify(config.path)} must be absolute`);
  if (config.format !== 'lines' && config.format !== 'json')
    throw new FileConfigError(`format must be lines or json, not ${JSON.stringify(config.format)}`);
  const mode = config.mode ?? 0o644;
  let peers = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every earlier change has finished. */
  function serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = queue.then(fn, fn);
    queue = next.catch(() => {});
    return next;
  }

  let written = false;
  async function commit(next: Set<string>): Promise<string | undefined> {
    const list = [...next].sort();
    // A round that changes nothing rewrites (and fsyncs) nothing.
    if (written && next.size === peers.size && list.every((n) => peers.has(n))) return undefined;
    try {
      await writeFileAtomic(config.path, renderPeerFile(list, config.format), mode, (tempPath) =>
        deps.onWrite?.({ tempPath, path: config.path, peers: list }),
      );
    } catch (e) {
      return `cannot write ${config.path}: ${(e as Error).message}`;
    }
    peers = next;
    written = true;
    return undefined;
  }

  async function applyRound(ops: {
    disconnect: readonly string[];
    connect: readonly string[];
  }): Promise<BatchResults> {
    return serialized(async () => {
      const started = performance.now();
      const next = new Set(peers);
      const refused = new Map<string, ConnectResult>();
      const valid = (action: ConnectorAction, node: string): boolean => {
        const check = checkNodeName(node);
        if (!check.ok) refused.set(`${action} ${node}`, invalidNameResult(action, node, check.problem));
        return check.ok;
      };
      for (const n of ops.disconnect) if (valid('disconnect', n)) next.delete(n);
      for (const n of ops.connect) if (valid('connect', n)) next.add(n);
      const error = await commit(next);
      const ms = performance.now() - started;
      const result = (action: ConnectorAction, node: string): ConnectResult =>
        refused.get(`${action} ${node}`) ??
        (error === undefined
          ? { ok: true, action, node, ms }
          : { ok: false, action, node, ms, failure: 'Error', error });
      return {
        disconnect: ops.disconnect.map((n) => result('disconnect', n)),
        connect: ops.connect.map((n) => result('connect', n)),
      };
    });
  }

  async function one(action: ConnectorAction, node: string): Promise<ConnectResult> {
    const r = await applyRound(
      action === 'connect' ? { disconnect: [], connect: [node] } : { disconnect: [node], connect: [] },
    );
    return (action === 'connect' ? r.connect[0] : r.disconnect[0])!;
  }

  return {
    kind: 'file',
    path: config.path,
    connect: (node) => one('connect', node),
    disconnect: (node) => one('disconnect', node),
    applyRound,
    connected: async () => ({ ok: true, nodes: [...peers].sort() }),
    close: async () => {
      await queue;
    },
  };
}

export const fileConnector: ConnectorDefinition<FileConnectorConfig> = {
  kind: 'file',
  help: 'rewrites --file-path atomically with the current peers (lines or JSON).',
  options: {
    filePath: { type: 'string', description: 'file: absolute path of the peer list, rewritten atomically' },
    fileFormat: {
      type: 'string',
      description: 'file: one node per line, or JSON {"peers":[…]}',
      enum: ['lines', 'json'],
      default: 'lines',
    },
  },
  schema: {
    type: 'object',
    required: ['kind', 'path', 'format'],
    properties: {
      kind: { const: 'file' },
      path: { type: 'string', pattern: '^/' },
      format: { enum: ['lines', 'json'] },
      mode: { type: 'integer', minimum: 0, maximum: 0o777 },
    },
  },
  fromOptions: (o) => ({ kind: 'file', path: o.filePath, format: o.fileFormat }),
  create: async (config, deps) => createFileConnector(config, deps),
};
