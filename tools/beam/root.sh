#!/usr/bin/env bash
# Debian roots that hold a newer OTP, Elixir and rebar3 than this machine's, for the OTP
# library's matrix (clients/cluster_topology). Each root is made by debootstrap (minbase) plus Debian's
# packages, cached under ~/.cache/cluster-topology/beam-roots/<cell>-<key>, where the key is a
# hash of the suite and the package list: a changed list builds a new root.
#
#   tools/beam/root.sh cells                       the cells: name, suite, what they hold
#   tools/beam/root.sh build <cell>                builds the root unless cached; prints its path
#   tools/beam/root.sh path <cell>                 prints the cached root's path (1: not built)
#   tools/beam/root.sh run <cell> [--bind DIR]… -- <command> [args…]
#                                                  runs the command inside the root, in the
#                                                  current directory, with this environment
#   tools/beam/root.sh versions <cell>             OTP, erts, Elixir and rebar3 of the cell
#   tools/beam/root.sh prune                       deletes roots no current list names
#
# Cell otp25 is this machine (Debian bookworm): `run otp25 -- cmd` runs cmd as it is.
#
# `run` enters a private mount namespace (unshare), so its bind mounts (this repository, /tmp,
# /etc/hosts, /dev, /proc and any --bind DIR, each at its own path) exist only for that command
# and vanish with it, however it ends; no mount is ever visible outside, and a root can be
# deleted safely (prune still checks findmnt first). The command keeps its pid through every
# exec, so a signal sent to it reaches the BEAM process itself. Processes inside share this
# machine's network (loopback included), so they reach the dev cluster and each other.
#
# Needs root, debootstrap, unshare and chroot. The mirror is debootstrap's default or the one
# this machine's apt sources name (read at run time); forky, which this debootstrap has no
# script for, is made with sid's script.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin # chroot, debootstrap
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# The user's home from the password database: the tests run BEAM programs with a HOME of their own.
cache=${CTOPO_CACHE_DIR:-$(getent passwd "$(id -u)" | cut -d: -f6)/.cache/cluster-topology}/beam-roots
say() { echo "beam-root: $*" >&2; }
die() { say "$*"; exit 1; }

# The cells. Every package must configure in a minbase root (checked after the install).
# rebar3 depends on erlang-reltool, which depends on erlang-wx and GTK; see install_packages.
common=(erlang-base erlang-dev erlang-eunit erlang-ssl erlang-inets erlang-tools erlang-dialyzer
  erlang-syntax-tools erlang-parsetools erlang-proper elixir rebar3 git ca-certificates)
declare -A suite=([otp27]=trixie [otp29]=forky)
declare -A dscript=([otp27]=trixie [otp29]=sid)
declare -A extra=([otp27]="erlang-hex elixir-ex-doc" [otp29]="")

packages_of() { # the sorted package list of a cell
  local c=$1
  # shellcheck disable=SC2206
  local all=("${common[@]}" ${extra[$c]})
  printf '%s\n' "${all[@]}" | sort -u
}
# Bump `layout` when the way a root is made changes (install_packages, the checks in build).
key_of() { # what the root is made of: its suite, its packages and how they are installed
  { echo "layout 1"; echo "${suite[$1]}"; packages_of "$1"; } |
    sha256sum | cut -c1-12
}
check_cell() {
  [[ $1 == otp25 || -n ${suite[$1]:-} ]] || die "unknown cell '$1' (cells: otp25 ${!suite[*]})"
}
root_of() { echo "$cache/$1-$(key_of "$1")"; }

# The Debian mirror: the one the machine's apt sources use for its own suite, else debootstrap's
# default. Nothing is written into this repository.
mirror() {
  local m
  m=$(awk '/^URIs:/ {u=$2} /^Suites:/ && u != "" && $0 !~ /security/ {print u; exit}' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [[ -n $m ]] || m=$(awk '$1 == "deb" && $0 !~ /security/ && $0 !~ /\[/ {print $2; exit}' \
    /etc/apt/sources.list 2>/dev/null || true)
  echo "$m"
}

# Runs "$@" in a private mount namespace with the root's /proc and /dev mounted (for dpkg).
in_root_ns() { # in_root_ns <root> <command…>  (the command is run by the root's /bin/sh)
  local r=$1; shift
  unshare --mount --propagation private -- /bin/sh -c '
    set -e
    r=$1; shift
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive /bin/sh -c "$1"' sh "$r" "$@"
}

# The archive this machine reaches may serve a testing suite's Release file past its
# Valid-Until date (forky's was, by four weeks): apt would refuse it, debootstrap did not. The
# signatures are still checked; only the date is not.
install_packages() { # install_packages <root> <package…>
  local r=$1; shift
  in_root_ns "$r" "apt-get -o Acquire::Check-Valid-Until=false update -qq && apt-get install -y -qq --no-install-recommends $* >/dev/null"
}

build() {
  local c=$1 r
  r=$(root_of "$c")
  if [[ -f $r/.complete ]]; then echo "$r"; return; fi
  (( EUID == 0 )) || die "building a root needs root"
  for t in debootstrap unshare chroot findmnt; do
    command -v $t >/dev/null || die "$t is needed (apt-get install debootstrap util-linux)"
  done
  mkdir -p "$cache"
  exec 9>"$cache/.build-$c.lock"
  flock 9
  if [[ -f $r/.complete ]]; then echo "$r"; return; fi
  local t0=$SECONDS tmp=$r.partial m
  safe_rm "$tmp"; safe_rm "$r"
  m=$(mirror)
  say "debootstrap ${suite[$c]} (minbase) into $tmp"
  local args=(--variant=minbase "${suite[$c]}" "$tmp")
  [[ -n $m ]] && args+=("$m" "/usr/share/debootstrap/scripts/${dscript[$c]}")
  [[ -z $m && ${dscript[$c]} != "${suite[$c]}" ]] && die "no Debian mirror in this machine's apt sources, and debootstrap has no ${suite[$c]} script"
  debootstrap "${args[@]}" >"$tmp.log" 2>&1 || { tail -20 "$tmp.log" >&2; die "debootstrap failed (log: $tmp.log)"; }
  say "installing $(packages_of "$c" | tr '\n' ' ')"
  mapfile -t pk < <(packages_of "$c")
  install_packages "$tmp" "${pk[@]}"
  # Nothing may be left half-installed or unconfigured.
  local audit
  audit=$(in_root_ns "$tmp" 'dpkg --audit; dpkg-query -W -f "\${db:Status-Abbrev} \${Package}\n" | grep -v "^ii " || true')
  [[ -z $audit ]] || die "packages not configured in $tmp: $audit"
  in_root_ns "$tmp" 'apt-get clean; rm -rf /var/lib/apt/lists/*'
  rm -f "$tmp.log"
  mv "$tmp" "$r"
  (ROOT_DIR=$r versions_of "$c") >"$r/.versions"
  touch "$r/.complete"
  say "$c ready in $((SECONDS - t0)) s: $(cat "$r/.versions")"
  echo "$r"
}

# Deletes a directory that must hold no mount point (a bind mount would take the host's files).
safe_rm() {
  [[ -e $1 ]] || return 0
  if findmnt -rn -o TARGET | grep -q -F -- "$1"; then die "$1 still has mounts; not deleting it"; fi
  rm -rf --one-file-system -- "$1"
}

versions_of() {
  run "$1" -- /bin/sh -c '
    otp=$(erl -noshell -eval "io:format(\"~s\", [erlang:system_info(otp_release)]), halt().")
    full=$(cat "$(dirname "$(dirname "$(readlink -f "$(command -v erl)")")")"/releases/"$otp"/OTP_VERSION 2>/dev/null || echo "$otp")
    ex=$(elixir --version 2>/dev/null | sed -n "s/^Elixir \([0-9.]*\).*/\1/p")
    rb=$(rebar3 version 2>/dev/null | sed -n "s/^rebar \([0-9.]*\).*/\1/p")
    echo "OTP $full, Elixir ${ex:-none}, rebar3 ${rb:-none}"'
}

run() {
  local c=$1; shift
  local binds=("$repo" /tmp)
  while [[ ${1:-} == --bind ]]; do binds+=("$2"); shift 2; done
  [[ ${1:-} == -- ]] && shift
  (( $# )) || die "run: no command"
  if [[ $c == otp25 ]]; then exec "$@"; fi
  local r
  r=${ROOT_DIR:-$(root_of "$c")}
  [[ -f $r/.complete || -n ${ROOT_DIR:-} ]] || die "the $c root is not built (tools/beam/root.sh build $c)"
  (( EUID == 0 )) || die "entering a root needs root"
  for b in "${binds[@]}"; do mkdir -p "$r$b"; done
  touch "$r/etc/hosts"
  exec unshare --mount --propagation private -- /bin/sh -c '
    set -e
    r=$1; cwd=$2; n=$3; shift 3
    while [ "$n" -gt 0 ]; do mount --rbind "$1" "$r$1"; shift; n=$((n - 1)); done
    mount --bind /etc/hosts "$r/etc/hosts"
    mount --rbind /dev "$r/dev"
    mount -t proc proc "$r/proc"
    exec chroot "$r" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"' \
    sh "$r" "$PWD" "${#binds[@]}" "${binds[@]}" \
    env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

prune() {
  local keep=() d
  for c in "${!suite[@]}"; do keep+=("$(root_of "$c")"); done
  for d in "$cache"/*; do
    [[ -d $d ]] || continue
    [[ " ${keep[*]} " == *" $d "* ]] && continue
    say "deleting $d"
    safe_rm "$d"
  done
}

cmd=${1:-}; shift || true
case $cmd in
  cells)
    echo "otp25 bookworm (this machine)"
    for c in $(printf '%s\n' "${!suite[@]}" | sort); do echo "$c ${suite[$c]}: $(packages_of "$c" | tr '\n' ' ')"; done ;;
  build) check_cell "$1"; [[ $1 == otp25 ]] && { echo /; exit 0; }; build "$1" ;;
  path)
    check_cell "$1"; [[ $1 == otp25 ]] && { echo /; exit 0; }
    r=$(root_of "$1"); [[ -f $r/.complete ]] || exit 1; echo "$r" ;;
  run) check_cell "$1"; run "$@" ;;
  versions)
    check_cell "$1"
    if [[ $1 != otp25 && -f $(root_of "$1")/.versions ]]; then cat "$(root_of "$1")/.versions"; else versions_of "$1"; fi ;;
  prune) prune ;;
  *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
