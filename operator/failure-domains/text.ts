/**
 * Wording shared by the table and the condition message: how a level and a domain are named for
 * people, and how lists are kept short.
 */

/**
 * Short names for levels: the part of the key after its last `/` (`topology.kubernetes.io/zone`
 * → `zone`), unless two levels would get the same short name; then both keep their full key.
 */
export function levelDisplayNames(keys: readonly string[]): Map<string, string> {
  const short = (k: string): string => k.slice(k.lastIndexOf('/') + 1) || k;
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(short(k), (counts.get(short(k)) ?? 0) + 1);
  return new Map(keys.map((k) => [k, counts.get(short(k))! > 1 ? k : short(k)]));
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `votes` for one vote too: "1 vote", "2 votes". */
export function votes(n: number): string {
  return plural(n, 'vote', 'votes');
}

/** A plural for a level's short name, for "the link between sites". */
export function pluralNoun(noun: string): string {
  if (/(s|x|z|ch|sh)$/.test(noun)) return `${noun}es`;
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  return `${noun}s`;
}

/** The first `cap` items joined with ", ", then "+N more" for the rest (`extra` already left out). */
export function boundedList(items: readonly string[], cap: number, extra = 0): string {
  const shown = items.slice(0, cap);
  const more = items.length - shown.length + extra;
  return more > 0 ? [...shown, `+${more} more`].join(', ') : shown.join(', ');
}

/** Cut a text to `max` characters, marking the cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
