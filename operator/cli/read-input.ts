import { readFile } from 'node:fs/promises';

/**
 * Reads what a command was pointed at: a file, or standard input for `-` (so `kubectl get pods
 * -o json | ctopo resolve -f -` works). A file that cannot be read is the user's mistake, not a
 * crash: the error says which file and why, in words rather than an errno.
 */

export class InputReadError extends Error {}

const WHY: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/** `label` names the input in messages, e.g. `-f` or `--layout`. */
export async function readInput(
  source: string,
  stdin: NodeJS.ReadableStream,
  label: string,
): Promise<string> {
  if (source === '-') return readStream(stdin, label);
  try {
    return await readFile(source, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new InputReadError(`cannot read ${label} ${source}: ${WHY[code] ?? (e as Error).message}`);
  }
}

async function readStream(stream: NodeJS.ReadableStream, label: string): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  } catch (e) {
    throw new InputReadError(`cannot read ${label} - (standard input): ${(e as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
