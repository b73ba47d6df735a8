/**
 * Reads a Kubernetes list response (`{"kind":"PodList","metadata":{…},"items":[{…},{…}]}`) as
 * its text arrives and hands over each item as soon as it is complete, parsed on its own. A page
 * of 500 pods is then never one multi-megabyte string nor one tree of objects: each item is
 * parsed, handed on and dropped while the next is still on the wire. Polling 5,000 pods every
 * 10 s had made those page-sized heaps most of the operator's resident memory.
 *
 * - `push(text)` takes the next piece of the body, cut anywhere (inside a string, an escape or
 *   a number).
 * - Each element of the top-level `items` array goes to `onItem`, parsed with `JSON.parse`,
 *   in order. An `items` key anywhere deeper, or inside a string, is just data.
 * - `end()` parses and returns the rest of the document with `items` as `[]` (so `metadata`,
 *   `kind`, or a whole `Status` object when the server refused). A body that is not JSON, or
 *   ends early, throws a SyntaxError; items already handed on stay handed on.
 */
export class ListSplitter {
  /** Text outside the items array, collected for `end()`. */
  private skeleton = '';
  /** Text not yet consumed; everything before `scanned` has been looked at. */
  private buf = '';
  private scanned = 0;
  /** Where the skeleton's next part starts in `buf`; -1 inside the items array. */
  private skelFrom = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** In `buf`: the opening quote of the string being read at depth 1 (a key, perhaps). */
  private stringStart = -1;
  /** The last whole string read at depth 1, still quoted. */
  private lastString = '';
  /** The key whose value is being read at depth 1. */
  private key: string | undefined;
  private inItems = false;
  private sawItems = false;
  /** In `buf`: where the item being read starts; -1 between items. */
  private itemStart = -1;

  constructor(private readonly onItem: (item: unknown) => void) {}

  push(text: string): void {
    this.buf += text;
    const buf = this.buf;
    for (let i = this.scanned; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.depth === 1) this.lastString = buf.slice(this.stringStart, i + 1);
        }
        continue;
      }
      if (c === SPACE || c === NEWLINE || c === RETURN || c === TAB) continue;
      if (this.inItems && this.depth === 2 && this.itemStart < 0 && c !== COMMA && c !== CLOSE_BRACKET)
        this.itemStart = i;
      switch (c) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 1) this.stringStart = i;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          if (c === OPEN_BRACKET && this.depth === 1 && this.key === 'items' && !this.sawItems) {
            this.skeleton += buf.slice(this.skelFrom, i + 1);
            this.skelFrom = -1;
            this.inItems = true;
            this.sawItems = true;
          }
          this.depth++;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          this.depth--;
          if (this.inItems && this.depth === 1) {
            if (c !== CLOSE_BRACKET) throw new SyntaxError('list response: the items array is not closed');
            this.emit(i);
            this.inItems = false;
            this.skelFrom = i;
          } else if (this.depth < 0) throw new SyntaxError('list response: unbalanced brackets');
          break;
        case COLON:
          if (this.depth === 1) this.key = parseKey(this.lastString);
          break;
        case COMMA:
          if (this.depth === 1) this.key = undefined;
          else if (this.inItems && this.depth === 2) {
            if (this.itemStart < 0) throw new SyntaxError('list response: an empty element in items');
            this.emit(i);
          }
          break;
      }
    }
    this.scanned = buf.length;
    // Inside the items array nothing before the current item is needed any more.
    if (this.inItems) {
      const keep = this.itemStart >= 0 ? this.itemStart : buf.length;
      this.buf = buf.slice(keep);
      this.scanned -= keep;
      if (this.itemStart >= 0) this.itemStart = 0;
    }
  }

  end(): unknown {
    if (this.inString || this.inItems || this.depth !== 0)
      throw new SyntaxError('list response: the body ended early');
    const rest = this.skeleton + this.buf.slice(this.skelFrom);
    this.buf = '';
    return JSON.parse(rest);
  }

  private emit(end: number): void {
    if (this.itemStart < 0) return; // `[]`
    const text = this.buf.slice(this.itemStart, end);
    this.itemStart = -1;
    this.onItem(JSON.parse(text));
  }
}

/** A key is a JSON string; anything else before a colon is malformed, which `end()` reports. */
function parseKey(quoted: string): string | undefined {
  try {
    const k: unknown = JSON.parse(quoted);
    return typeof k === 'string' ? k : undefined;
  } catch {
    return undefined;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const TAB = 0x09;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
