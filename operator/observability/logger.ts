export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type Log = (level: LogLevel, message: string, meta?: Record<string, unknown>) => void;

const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 5 };

/**
 * JSON with every object's keys sorted, so that a line reads the same whatever order its fields
 * were set in: `undefined`, functions and symbols left out (in arrays: null), a value met again
 * inside itself written "[Circular]", toJSON() honoured (dates), bigints as numbers.
 */
export function stableJson(value: unknown): string {
  const open: unknown[] = [];
  const write = (v: unknown, inArray: boolean): string | undefined => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON(): unknown }).toJSON();
    switch (typeof v) {
      case 'string':
        return JSON.stringify(v);
      case 'number':
        return Number.isFinite(v) ? String(v) : 'null';
      case 'boolean':
        return String(v);
      case 'bigint':
        return v.toString();
      case 'object': {
        if (v === null) return 'null';
        if (open.includes(v)) return '"[Circular]"';
        open.push(v);
        let out: string;
        if (Array.isArray(v)) out = `[${v.map((x) => write(x, true) ?? 'null').join(',')}]`;
        else {
          const parts: string[] = [];
          for (const k of Object.keys(v).sort()) {
            const s = write((v as Record<string, unknown>)[k], false);
            if (s !== undefined) parts.push(`${JSON.stringify(k)}:${s}`);
          }
          out = `{${parts.join(',')}}`;
        }
        open.pop();
        return out;
      }
      default:
        return inArray ? 'null' : undefined;
    }
  };
  return write(value, false) ?? 'null';
}

/**
 * Structured JSON logs on stderr, one object per line, at a configurable level: the meta's fields
 * beside `component`, `level`, `message` and `timestamp` (ISO 8601), keys sorted.
 */
export function createLogger(
  level: LogLevel,
  component: string,
  write: (line: string) => void = (line) => void process.stderr.write(line),
): Log {
  const max = SEVERITY[level];
  return (l, message, meta) => {
    if (SEVERITY[l] > max) return;
    write(
      stableJson({
        component,
        timestamp: new Date().toISOString(),
        ...meta,
        level: l,
        // A meta `message` is appended, as winston did.
        message: meta?.message ? `${message} ${String(meta.message)}` : message,
      }) + '\n',
    );
  };
}
