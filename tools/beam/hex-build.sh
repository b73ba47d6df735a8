#!/usr/bin/env bash
# The OTP library (clients/cluster_topology) as a Hex package, and its API docs, built with Debian's
# erlang-hex and elixir-ex-doc inside the otp27 root (tools/beam/root.sh builds it if missing).
# Nothing is published: no Hex registry is reachable from here.
#
#   tools/beam/hex-build.sh OUTDIR
#     OUTDIR/cluster_topology-<version>.tar   the package `mix hex.publish` would upload
#     OUTDIR/doc/                             HTML docs: the README and every module's edoc
#   prints the package's path on its last line.
#
# The package holds the library's files as they are in this checkout (tracked and new, not
# ignored; mix.exs `package.files` chooses among them) and the repository's LICENSE. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[[ -n ${1:-} ]] || { echo "usage: tools/beam/hex-build.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
bash "$here/root.sh" build otp27 >/dev/null
stage=$(mktemp -d /tmp/ctopo-hex-XXXXXX)
trap 'rm -rf "$stage"' EXIT
(cd "$repo" && git ls-files -co --exclude-standard clients/cluster_topology) | while read -r f; do
  [[ -e $repo/$f ]] && install -D -m 0644 "$repo/$f" "$stage/pkg/${f#clients/cluster_topology/}"
done
[[ -f $repo/LICENSE ]] || { echo "hex-build: the repository has no LICENSE; a Hex package carries its licence text" >&2; exit 1; }
install -m 0644 "$repo/LICENSE" "$stage/pkg/LICENSE"
version=$(sed -n 's/^ *version: "\([^"]*\)".*/\1/p' "$stage/pkg/mix.exs")
[[ -n $version ]] || { echo "hex-build: no version in clients/cluster_topology/mix.exs" >&2; exit 1; }
mkdir -p "$stage/home"
inroot() { # runs a command in the otp27 root, in the staged package, offline
  (cd "$stage/pkg" && env -i PATH=/usr/bin:/bin HOME="$stage/home" MIX_HOME="$stage/home/mix" \
    HEX_OFFLINE=1 LANG=C.UTF-8 MIX_ENV=dev bash "$here/root.sh" run otp27 -- "$@")
}
inroot mix hex.build --output "$out/cluster_topology-$version.tar" >&2
# API docs: ex_doc reads each module's documentation from edoc's chunks beside the compiled app.
inroot mix compile >&2
inroot erl -noshell -eval '
  case edoc:files(filelib:wildcard("src/*.erl"), [{doclet, edoc_doclet_chunks},
      {layout, edoc_layout_chunks}, {dir, "_build/dev/lib/cluster_topology/doc"}, {preprocess, true}]) of
      ok -> halt(0);
      Error -> io:format(standard_error, "edoc: ~p~n", [Error]), halt(1)
  end.' >&2
rm -rf "$out/doc"
inroot mix docs --formatter html --output "$out/doc" >&2
echo "$out/cluster_topology-$version.tar"
