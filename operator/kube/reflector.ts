import {
  ApiError,
  TransportError,
  type KubeObject,
  type ObjectList,
  type WatchHandle,
  type WatchEventType,
} from './client.js';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import {
  step,
  type Failure,
  type ReflectorAction,
  type ReflectorInput,
  type ReflectorState,
} from './reflector-machine.js';

/**
 * The shell around `reflector-machine.ts`: performs list and watch calls, keeps the store
 * (objects by namespace/name), runs the timers (poll, idle, backoff) and feeds outcomes back
 * into the machine. Listeners hear about every change and every poll outcome.
 */

export type PollOutcome = { ok: true; at: Date; count: number } | { ok: false; at: Date; failure: Failure };

export interface ReflectorOptions<T extends KubeObject> {
  name: string;
  /**
   * Lists everything, applying `keep` (the transform) to each object as its page arrives, so
   * the raw objects of a whole list are never held at once.
   */
  list: (keep: (o: KubeObject) => T) => Promise<ObjectList<T>>;
  watch: (
    rv: string,
    onEvent: (type: WatchEventType, object: KubeObject) => void,
    onDone: (err: unknown) => void,
    idleTimeoutMs: number,
  ) => Promise<WatchHandle>;
  /**
   * How often to re-list at the latest (the polling interval); undefined: only when a watch
   * cannot resume (410 Gone) or `resync()` asks — client-go's informers, which trust the watch.
   */
  resyncMs?: number;
  /** A watch silent this long (no event, no bookmark) is taken for dead. */
  idleMs?: number;
  /** Retry delays after a failed list or watch (client-go's shape; `capMs` also as `backoffCapMs`). */
  backoff?: Partial<BackoffOptions>;
  backoffCapMs?: number;
  /**
   * A watch the server ends cleanly sooner than this, having sent nothing, is retried after a
   * backoff rather than at once (client-go's "very short watch").
   */
  minWatchMs?: number;
  /** Keeps only what the controller needs of each object (memory). */
  transform?: (o: KubeObject) => T;
  /** Something changed: `key` (namespace/name) for one object, undefined after a re-list. */
  onChange?: (key?: string) => void;
  onPoll?: (outcome: PollOutcome) => void;
  onRestart?: (why: string) => void;
  /** A watch failed (not a 410): readers report it at once instead of at the next list. */
  onWatchFailure?: (failure: Failure) => void;
  /** A watch was opened (the server accepted it). */
  onWatchOpen?: () => void;
  log?: (level: 'debug' | 'info' | 'warn', message: string, meta?: Record<string, unknown>) => void;
}

export function failureOf(err: unknown): Failure {
  if (err instanceof ApiError) return { code: err.code, reason: err.reason, message: err.message };
  if (err instanceof TransportError) return { reason: 'TransportError', message: err.message };
  return { reason: 'TransportError', message: err instanceof Error ? err.message : String(err) };
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Reflector<T extends KubeObject = KubeObject> {
  private state: ReflectorState = { phase: 'Empty' };
  private readonly store = new Map<string, T>();
  private watchHandle: WatchHandle | undefined;
  private watchGeneration = 0;
  private resyncTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private backoffTimer: NodeJS.Timeout | undefined;
  private listGeneration = 0;
  /** True once a list has succeeded: the store reflects the server. */
  synced = false;
  lastPoll: PollOutcome | undefined;

  private readonly backoff: Backoff;

  constructor(private readonly opts: ReflectorOptions<T>) {
    this.backoff = new Backoff({
      ...DEFAULT_BACKOFF,
      capMs: opts.backoffCapMs ?? Math.min(DEFAULT_BACKOFF.capMs, opts.resyncMs ?? Infinity),
      ...opts.backoff,
    });
  }

  get name(): string {
    return this.opts.name;
  }

  items(): T[] {
    return [...this.store.values()];
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(`${namespace ?? ''}/${name}`);
  }

  start(): void {
    this.feed({ type: 'Start' });
    this.armResync();
  }

  stop(): void {
    clearInterval(this.resyncTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.backoffTimer);
    clearTimeout(this.upTimer);
    this.feed({ type: 'Stop' });
  }

  /** Re-list now (a watch is stopped for it); while a list is under way, nothing more. */
  resync(): void {
    this.feed({ type: 'ResyncDue' });
  }

  /** Whether the last list or watch failed and no list or watch has worked since. */
  get failing(): boolean {
    return this.state.phase === 'Backoff';
  }

  private armResync(): void {
    clearInterval(this.resyncTimer);
    if (this.opts.resyncMs === undefined) return;
    this.resyncTimer = setInterval(() => this.feed({ type: 'ResyncDue' }), this.opts.resyncMs);
    this.resyncTimer.unref?.();
  }

  /**
   * Since when the reflector has not been watching (undefined while it is). A watch counts once
   * it has stayed open `minWatchMs` or delivered an event, not when it is asked for: a watch cut
   * before every answer and retried each second was taken for up and kept the operator ready for
   * minutes. (The API server may send a quiet watch's headers only with its first event, so an
   * answer cannot be waited for.)
   */
  downSince: number | undefined = Date.now();
  private upTimer: NodeJS.Timeout | undefined;

  private feed(input: ReflectorInput<T>): void {
    const { state, actions } = step<T>(this.state, input);
    this.state = state;
    if (state.phase !== 'Watching') this.downSince ??= Date.now();
    for (const a of actions) this.perform(a);
  }

  /** The watch of `generation` works: it stayed open, or it spoke. */
  private watchUp(generation: number): void {
    if (generation === this.watchGeneration && this.state.phase === 'Watching') this.downSince = undefined;
  }

  private perform(a: ReflectorAction<T>): void {
    switch (a.do) {
      case 'List':
        void this.doList();
        return;
      case 'Watch':
        void this.doWatch(a.rv);
        return;
      case 'StopWatch':
        this.stopWatch();
        return;
      case 'Wait': {
        clearTimeout(this.backoffTimer);
        const ms = this.backoff.next();
        this.opts.log?.('debug', `${this.opts.name}: retrying in ${ms} ms`, { retryInMs: ms });
        this.backoffTimer = setTimeout(() => this.feed({ type: 'BackoffElapsed' }), ms);
        this.backoffTimer.unref?.();
        return;
      }
      case 'Replace':
        this.replace(a.items);
        return;
      case 'Apply':
        this.apply(a.event, a.object);
        return;
      case 'ReportPoll':
        this.lastPoll = a.ok
          ? { ok: true, at: new Date(), count: a.count }
          : { ok: false, at: new Date(), failure: a.failure };
        if (a.ok) this.synced = true;
        this.opts.onPoll?.(this.lastPoll);
        return;
      case 'CountRestart':
        this.opts.log?.('debug', `${this.opts.name}: watch restarts (${a.why})`);
        this.opts.onRestart?.(a.why);
        return;
    }
  }

  private transform(o: KubeObject): T {
    return this.opts.transform ? this.opts.transform(o) : (o as T);
  }

  private async doList(): Promise<void> {
    const generation = ++this.listGeneration;
    try {
      const list = await this.opts.list((o) => this.transform(o));
      if (generation !== this.listGeneration) return;
      this.feed({ type: 'ListSucceeded', items: list.items, rv: list.metadata.resourceVersion });
    } catch (err) {
      if (generation !== this.listGeneration) return;
      this.feed({ type: 'ListFailed', failure: failureOf(err) });
    }
  }

  private async doWatch(rv: string): Promise<void> {
    this.stopWatch();
    const generation = ++this.watchGeneration;
    const idleMs = this.opts.idleMs ?? 90_000;
    const current = () => generation === this.watchGeneration;
    const opened = Date.now();
    let heard = false;
    const touch = () => {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => {
        if (!current()) return;
        this.opts.onWatchFailure?.({
          reason: 'TransportError',
          message: `the watch was silent for ${Math.round(idleMs / 1000)} s`,
        });
        this.feed({ type: 'IdleTimeout' });
      }, idleMs);
      this.idleTimer.unref?.();
    };
    touch();
    clearTimeout(this.upTimer);
    this.upTimer = setTimeout(() => this.watchUp(generation), this.opts.minWatchMs ?? 1000);
    this.upTimer.unref?.();
    try {
      const handle = await this.opts.watch(
        rv,
        (type, object) => {
          if (!current()) return;
          heard = true;
          touch();
          this.watchUp(generation);
          const objRv = object?.metadata?.resourceVersion;
          if (type === 'BOOKMARK') this.feed({ type: 'Bookmark', rv: objRv });
          else if (type === 'ERROR') {
            const status = object as unknown as { code?: number; reason?: string; message?: string };
            this.watchFailed({
              code: status.code,
              reason: status.reason ?? 'WatchError',
              message: status.message ?? 'watch error event',
            });
          } else this.feed({ type: 'Event', event: type, object: this.transform(object), rv: objRv });
        },
        (err) => {
          if (!current()) return;
          clearTimeout(this.idleTimer);
          const early = !heard && Date.now() - opened < (this.opts.minWatchMs ?? 1000);
          if (err) this.watchFailed(failureOf(err));
          else this.feed({ type: 'WatchClosed', early });
        },
        idleMs,
      );
      if (current()) {
        this.watchHandle = handle;
        this.opts.onWatchOpen?.();
      } else handle.abort();
    } catch (err) {
      if (!current()) return;
      this.watchFailed(failureOf(err));
    }
  }

  private watchFailed(failure: Failure): void {
    if (failure.code !== 410) this.opts.onWatchFailure?.(failure);
    this.feed({ type: 'WatchFailed', failure });
  }

  private stopWatch(): void {
    this.watchGeneration++;
    clearTimeout(this.idleTimer);
    this.watchHandle?.abort();
    this.watchHandle = undefined;
  }

  private replace(items: T[]): void {
    const next = new Map(items.map((o) => [keyOf(o), o]));
    let changed = next.size !== this.store.size;
    for (const [k, o] of next) {
      const old = this.store.get(k);
      if (!old || old.metadata.resourceVersion !== o.metadata.resourceVersion) changed = true;
    }
    this.store.clear();
    for (const [k, o] of next) this.store.set(k, o);
    if (changed) this.opts.onChange?.();
  }

  private apply(event: 'ADDED' | 'MODIFIED' | 'DELETED', o: T): void {
    const k = keyOf(o);
    if (event === 'DELETED') this.store.delete(k);
    else {
      const old = this.store.get(k);
      if (old && old.metadata.resourceVersion === o.metadata.resourceVersion) return;
      this.store.set(k, o);
    }
    this.opts.onChange?.(k);
  }
}
