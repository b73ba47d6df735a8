import type { Kube, KubeObject, ObjectList } from './client.js';
import type { ReflectorOptions } from './reflector.js';

/**
 * The list and watch calls a reflector makes for one collection: a list in pages (each object
 * passed through the reflector's transform as its page arrives) and a watch from a
 * resourceVersion with bookmarks, which the server ends after `watchTimeoutSeconds`.
 */

export interface ListWatchOptions {
  /** Query parameters both calls carry (labelSelector, fieldSelector). */
  query?: Record<string, string>;
  /** Objects per list page. */
  pageSize?: number;
  /**
   * How long the server keeps one watch open. 290 s: under the 5 minutes after which load
   * balancers commonly cut an idle-looking stream (kube-rs' choice).
   */
  watchTimeoutSeconds?: number;
  /** Called once when a watch opens and once when it ends or is aborted (a gauge of open watches). */
  onWatchOpen?: () => void;
  onWatchClose?: () => void;
}

export const DEFAULT_WATCH_TIMEOUT_SECONDS = 290;
export const DEFAULT_PAGE_SIZE = 500;

export function listWatch<T extends KubeObject>(
  kube: Kube,
  path: string,
  opts: ListWatchOptions = {},
): Pick<ReflectorOptions<T>, 'list' | 'watch'> {
  const query = opts.query ?? {};
  return {
    list: (keep) => listAll(kube, path, query, opts.pageSize ?? DEFAULT_PAGE_SIZE, keep),
    watch: async (rv, onEvent, onDone, idleMs) => {
      opts.onWatchOpen?.();
      let open = true;
      const closed = () => {
        if (open) opts.onWatchClose?.();
        open = false;
      };
      try {
        const handle = await kube.watch(
          path,
          {
            ...query,
            resourceVersion: rv,
            allowWatchBookmarks: true,
            timeoutSeconds: opts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS,
          },
          onEvent,
          (err) => {
            closed();
            onDone(err);
          },
          idleMs,
        );
        return {
          abort: () => {
            closed();
            handle.abort();
          },
        };
      } catch (e) {
        closed();
        throw e;
      }
    },
  };
}

/** Every page of a list, following `continue`; the resourceVersion is the last page's. */
export async function listAll<T>(
  kube: Kube,
  path: string,
  query: Record<string, string>,
  pageSize: number,
  keep: (o: KubeObject) => T,
): Promise<ObjectList<T>> {
  const items: T[] = [];
  let cont: string | undefined;
  let rv: string;
  do {
    const page = await kube.list(path, { ...query, limit: pageSize, continue: cont }, keep);
    for (const item of page.items) items.push(item);
    rv = page.metadata.resourceVersion;
    cont = page.metadata.continue || undefined;
  } while (cont);
  return { items, metadata: { resourceVersion: rv } };
}
