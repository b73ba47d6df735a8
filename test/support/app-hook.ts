import { writeFile } from 'node:fs/promises';

/**
 * An application's hook for the exec connector, as a user would write one: it drives its local
 * node (`$LOCAL_NODE`) with erl_call. With `list`, it also answers `list` with the node's nodes().
 */
export async function writeAppHook(path: string, opts: { list: boolean }): Promise<void> {
  await writeFile(
    path,
    [
      '#!/bin/sh',
      'call() { erl_call -h "hook$$" -timeout 10 -name "$LOCAL_NODE" -a "$1"; }',
      'case "$1" in',
      '  connect) [ "$(call "net_kernel connect_node [\'$2\']")" = true ] ;;',
      '  disconnect) call "erlang disconnect_node [\'$2\']" > /dev/null ;;',
      ...(opts.list
        ? ['  list) out=$(call "erlang nodes []") || exit 1; echo "$out" | tr -d "[]\' " | tr "," "\\n" ;;']
        : []),
      '  *) exit 2 ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}
