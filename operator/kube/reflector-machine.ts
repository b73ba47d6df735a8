/**
 * The reflector's state machine: list, then watch from the list's resourceVersion; re-list on
 * every poll; resume a broken watch from the last resourceVersion; re-list on 410 Gone.
 *
 * It is one pure function, `step(state, input) → { state, actions }`, in the shape of kube-rs'
 * `watcher.rs`: the shell (`reflector.ts`) performs the actions and feeds back what happened.
 * Every input leads somewhere — there is no state in which the reflector waits for nothing —
 * so a watch can die, hang or be refused, and the reflector always comes back:
 *
 * - `Empty` → (Start) → `Listing`.
 * - `Listing` → list succeeded → `Watching(rv)`, the store is replaced and the poll reported;
 *   list failed → `Backoff(attempt+1)` (the failure is reported too: it is the specified poll
 *   outcome), then `Listing` again.
 * - `Watching(rv)`: ADDED/MODIFIED/DELETED are applied and move rv; BOOKMARK moves rv;
 *   the server closing the stream normally → watch again from rv at once, unless it closed at
 *   once without a word (`early`: a server that ends every watch straight away) → `Backoff`
 *   first, so such a server is not asked again in a hot loop;
 *   an ERROR event or failure with 410 → `Listing` (rv is too old: re-list);
 *   any other failure or the idle timer → `Backoff` and then watch again from rv.
 * - A poll (ResyncDue) in `Watching` or `Backoff` → stop the watch and re-list; a list
 *   supersedes whatever the watch would have said. In `Listing` it is ignored.
 * - `Stop` from anywhere → `Stopped`, which ignores everything.
 */

export interface Failure {
  /** HTTP status, or undefined for a transport error. */
  code?: number;
  reason: string;
  message: string;
}

/** The API server refused who we are (401) or what we asked (403): retrying alone will not help. */
export const isForbidden = (f: Pick<Failure, 'code'>): boolean => f.code === 401 || f.code === 403;

export type ReflectorState =
  | { phase: 'Empty' }
  | { phase: 'Listing'; attempt: number }
  | { phase: 'Watching'; rv: string }
  | { phase: 'Backoff'; attempt: number; resume?: string }
  | { phase: 'Stopped' };

export type ReflectorInput<T> =
  | { type: 'Start' }
  | { type: 'Stop' }
  | { type: 'ListSucceeded'; items: T[]; rv: string }
  | { type: 'ListFailed'; failure: Failure }
  | { type: 'Event'; event: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T; rv: string | undefined }
  | { type: 'Bookmark'; rv: string | undefined }
  | { type: 'WatchFailed'; failure: Failure }
  | { type: 'WatchClosed'; early?: boolean }
  | { type: 'IdleTimeout' }
  | { type: 'BackoffElapsed' }
  | { type: 'ResyncDue' };

export type ReflectorAction<T> =
  | { do: 'List' }
  | { do: 'Watch'; rv: string }
  | { do: 'StopWatch' }
  | { do: 'Wait'; attempt: number }
  | { do: 'Replace'; items: T[] }
  | { do: 'Apply'; event: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { do: 'ReportPoll'; ok: true; count: number }
  | { do: 'ReportPoll'; ok: false; failure: Failure }
  | { do: 'CountRestart'; why: 'Closed' | 'Failed' | 'Idle' | 'Gone' };

export interface Step<T> {
  state: ReflectorState;
  actions: ReflectorAction<T>[];
}

const stay = <T>(state: ReflectorState): Step<T> => ({ state, actions: [] });

export function step<T>(state: ReflectorState, input: ReflectorInput<T>): Step<T> {
  if (input.type === 'Stop')
    return { state: { phase: 'Stopped' }, actions: state.phase === 'Watching' ? [{ do: 'StopWatch' }] : [] };
  switch (state.phase) {
    case 'Stopped':
      return stay(state);

    case 'Empty':
      return input.type === 'Start'
        ? { state: { phase: 'Listing', attempt: 0 }, actions: [{ do: 'List' }] }
        : stay(state);

    case 'Listing':
      switch (input.type) {
        case 'ListSucceeded':
          return {
            state: { phase: 'Watching', rv: input.rv },
            actions: [
              { do: 'Replace', items: input.items },
              { do: 'ReportPoll', ok: true, count: input.items.length },
              { do: 'Watch', rv: input.rv },
            ],
          };
        case 'ListFailed':
          return {
            state: { phase: 'Backoff', attempt: state.attempt + 1 },
            actions: [
              { do: 'ReportPoll', ok: false, failure: input.failure },
              { do: 'Wait', attempt: state.attempt + 1 },
            ],
          };
        default:
          return stay(state); // stale watch news, a poll while listing: the list answers both
      }

    case 'Watching':
      switch (input.type) {
        case 'Event':
          return {
            state: { phase: 'Watching', rv: input.rv ?? state.rv },
            actions: [{ do: 'Apply', event: input.event, object: input.object }],
          };
        case 'Bookmark':
          return stay({ phase: 'Watching', rv: input.rv ?? state.rv });
        case 'WatchClosed':
          if (input.early)
            return {
              state: { phase: 'Backoff', attempt: 1, resume: state.rv },
              actions: [
                { do: 'CountRestart', why: 'Closed' },
                { do: 'Wait', attempt: 1 },
              ],
            };
          return {
            state,
            actions: [
              { do: 'CountRestart', why: 'Closed' },
              { do: 'Watch', rv: state.rv },
            ],
          };
        case 'WatchFailed':
          if (input.failure.code === 410)
            return {
              state: { phase: 'Listing', attempt: 0 },
              actions: [{ do: 'StopWatch' }, { do: 'CountRestart', why: 'Gone' }, { do: 'List' }],
            };
          return {
            state: { phase: 'Backoff', attempt: 1, resume: state.rv },
            actions: [{ do: 'StopWatch' }, { do: 'CountRestart', why: 'Failed' }, { do: 'Wait', attempt: 1 }],
          };
        case 'IdleTimeout':
          return {
            state: { phase: 'Backoff', attempt: 1, resume: state.rv },
            actions: [{ do: 'StopWatch' }, { do: 'CountRestart', why: 'Idle' }, { do: 'Wait', attempt: 1 }],
          };
        case 'ResyncDue':
          return { state: { phase: 'Listing', attempt: 0 }, actions: [{ do: 'StopWatch' }, { do: 'List' }] };
        default:
          return stay(state);
      }

    case 'Backoff':
      switch (input.type) {
        case 'BackoffElapsed':
          if (state.resume !== undefined)
            return {
              state: { phase: 'Watching', rv: state.resume },
              actions: [{ do: 'Watch', rv: state.resume }],
            };
          return { state: { phase: 'Listing', attempt: state.attempt }, actions: [{ do: 'List' }] };
        case 'ResyncDue':
          return { state: { phase: 'Listing', attempt: state.attempt }, actions: [{ do: 'List' }] };
        default:
          return stay(state);
      }
  }
}

/**
 * The delay of a retry's `attempt` (the shell's `Backoff` counts attempts over time):
 * exponential with jitter: attempt 1 waits up to `baseMs`, each further attempt
 * doubles the ceiling up to `capMs`. `random` in [0, 1) comes from the caller (purity).
 */
export function backoffDelay(attempt: number, random: number, baseMs = 500, capMs = 30_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}
