#!/usr/bin/env bash
# Builds the real node's images with no registry, in a container store of their own under the
# build cache, and writes each as an OCI archive that `ctr images import` takes:
#
#   base   Debian bookworm (debootstrap, minbase) + the Node.js binary of node_modules' `node`
#          package + npm, laid out as the official node image is (/usr/local/bin). Tagged in the
#          private store as the Dockerfile's base (node:<version>-bookworm-slim), so the
#          repository's Dockerfile builds unchanged with --pull=never.
#   app    localhost/cluster-topology:dev — the repository's Dockerfile, built by buildah.
#   beam   localhost/ctopo-beam:dev — Debian trixie (debootstrap, minbase) with erlang-base,
#          erlang-ssl (OTP 27) and the OTP client library compiled by the same OTP (in the otp27
#          root of tools/beam/root.sh) into /opt/cluster_topology/ebin: the test pods' BEAM node.
#          The sidecar's erl_call (the app image's bookworm OTP 25) reaches it: OTP keeps
#          distribution compatible two releases either way, 23 to 27 from 25.
#   pause  localhost/ctopo-pause:dev — tools/pause, containerd's sandbox image.
#
#   tools/node/images.sh [--print-dir]     # builds what is missing; prints IMAGES_DIR=<this run's archives>
#
# Needs root, buildah and debootstrap (apt-get install buildah debootstrap). The Debian archive
# (debootstrap's default mirror) and the npm registry are reached while building (debootstrap,
# apt-get and npm ci in the Dockerfile's steps); nothing else. A rebuild happens when an input changes (the Dockerfile, package-lock.json, the
# source tree's hash for the app image).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${CTOPO_CACHE_DIR:-$HOME/.cache/cluster-topology}
out=$cache/images
[[ ${1:-} == --print-dir ]] && { echo "IMAGES_DIR=$out"; exit 0; }
(( EUID == 0 )) || { echo "images: building the node's images needs root" >&2; exit 1; }
for c in buildah debootstrap; do
  command -v $c >/dev/null || { echo "images: $c is needed (apt-get install $c)" >&2; exit 1; }
done
mkdir -p "$out"
store=(--root "$cache/containers/storage" --runroot /run/ctopo-containers --storage-driver overlay)
bh() { buildah "${store[@]}" "$@"; }
say() { echo "images: $*" >&2; }
node_version=$("$repo/node_modules/.bin/node" -p process.versions.node)
# The Dockerfile's FROM is the short name node:<version>-bookworm-slim; with --pull=never buildah
# finds it in the local store under localhost/.
base_tag=localhost/node:$node_version-bookworm-slim
start=$SECONDS

# The archive name carries a hash of what the image is made of: a changed input rebuilds it.
stamp() { sha256sum "$@" | sha256sum | cut -c1-12; }

build_base() {
  local rootfs=$cache/debootstrap-bookworm
  if [[ ! -f $rootfs/.complete ]]; then
    say "debootstrap bookworm (minbase) into $rootfs (first time only; a few minutes)"
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" >&2
    touch "$rootfs/.complete"
  fi
  if bh inspect --type image "$base_tag" >/dev/null 2>&1; then say "base $base_tag cached"; return; fi
  say "base: bookworm + Node.js $node_version as $base_tag (local only)"
  local c m npm_dir
  c=$(bh from scratch)
  m=$(bh mount "$c")
  cp -a "$rootfs/." "$m/"
  rm -f "$m/.complete"
  rm -rf "$m/var/cache/apt/archives/"*.deb "$m/var/lib/apt/lists/"*
  install -m 0755 "$(readlink -f "$repo/node_modules/.bin/node")" "$m/usr/local/bin/node"
  # npm for the Dockerfile's build stage: the one this machine runs (pure JavaScript).
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  mkdir -p "$m/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$m/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$m/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$m/usr/local/bin/npx"
  bh umount "$c" >/dev/null
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$node_version" --cmd node "$c"
  bh commit --quiet --rm "$c" "$base_tag" >/dev/null
}

save() { # save <image> <archive>
  rm -f "$2.tmp"
  bh push --quiet "$1" "oci-archive:$2.tmp:$1" >/dev/null
  mv -f "$2.tmp" "$2"
  say "wrote $2 ($(du -h "$2" | cut -f1))"
}

build_pause() {
  local f=$out/pause.tar
  built[pause]=$f
  [[ -f $f ]] && { say "pause cached"; return; }
  local bin=$cache/pause/pause
  if [[ ! -x $bin ]]; then
    mkdir -p "$(dirname "$bin")"
    (cd "$repo/tools/pause" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "$bin.tmp" .)
    mv -f "$bin.tmp" "$bin"
  fi
  local c m
  c=$(bh from scratch)
  m=$(bh mount "$c")
  install -m 0755 "$bin" "$m/pause"
  bh umount "$c" >/dev/null
  bh config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  bh commit --quiet --rm "$c" localhost/ctopo-pause:dev >/dev/null
  save localhost/ctopo-pause:dev "$f"
}

build_app() {
  local key f
  key=$(cd "$repo" && stamp Dockerfile package-lock.json <(git ls-files -s bin operator crds tsconfig.json package.json 2>/dev/null; git diff HEAD -- bin operator crds 2>/dev/null))
  f=$out/cluster-topology-$key.tar
  built[cluster-topology]=$f
  [[ -f $f ]] && { say "cluster-topology:dev cached ($key)"; ln -sf "$(basename "$f")" "$out/cluster-topology.tar"; return; }
  say "building the repository's Dockerfile with buildah (npm ci inside; a few minutes)"
  # This machine's CA bundle and npm's pointer to it are mounted for the build steps only (a
  # registry reached through a TLS-inspecting proxy needs them); nothing of them is in the image.
  local ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} npmrc=$cache/images/build-npmrc
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n' >"$npmrc"
  (cd "$repo" && bh bud --quiet --pull=never --network=host --isolation=chroot --layers=false \
    -v "$ca:/etc/ssl/certs/ca-certificates.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro" \
    -t localhost/cluster-topology:dev -f Dockerfile . >&2)
  save localhost/cluster-topology:dev "$f"
  ln -sf "$(basename "$f")" "$out/cluster-topology.tar"
}

build_beam() {
  # OTP 27 from Debian trixie, the library compiled by the same OTP (the otp27 root).
  local key f ebin rootfs=$cache/debootstrap-trixie-beam
  key=$(cd "$repo" && stamp tools/node/images.sh clients/cluster_topology/src/*) # relative: one key for every clone
  f=$out/ctopo-beam-$key.tar
  built[ctopo-beam]=$f
  [[ -f $f ]] && { say "ctopo-beam:dev cached ($key)"; ln -sf "$(basename "$f")" "$out/ctopo-beam.tar"; return; }
  if [[ ! -f $rootfs/.complete ]]; then
    say "debootstrap trixie (minbase) + erlang-base, erlang-ssl, iproute2 into $rootfs (first time only)"
    rm -rf --one-file-system "$rootfs"
    debootstrap --variant=minbase --include=erlang-base,erlang-ssl,iproute2 trixie "$rootfs" >&2
    touch "$rootfs/.complete"
  fi
  say "beam: trixie's OTP $(cat "$rootfs"/usr/lib/erlang/releases/*/OTP_VERSION) and the OTP client library"
  bash "$repo/tools/beam/root.sh" build otp27 >/dev/null
  ebin=$(mktemp -d /tmp/ctopo-beam-ebin-XXXXXX)
  (cd "$repo/clients/cluster_topology" && bash "$repo/tools/beam/root.sh" run otp27 -- erlc +warnings_as_errors -o "$ebin" src/*.erl)
  cp "$repo/clients/cluster_topology/src/cluster_topology.app.src" "$ebin/cluster_topology.app"
  local c m
  c=$(bh from scratch)
  m=$(bh mount "$c")
  cp -a "$rootfs/." "$m/"
  rm -f "$m/.complete"
  rm -rf "$m/var/cache/apt/archives/"*.deb "$m/var/lib/apt/lists/"*
  mkdir -p "$m/opt/cluster_topology"
  cp -r "$ebin" "$m/opt/cluster_topology/ebin"
  chmod -R a+rX "$m/opt/cluster_topology"
  bh umount "$c" >/dev/null
  rm -rf "$ebin"
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd erl "$c"
  bh commit --quiet --rm "$c" localhost/ctopo-beam:dev >/dev/null
  save localhost/ctopo-beam:dev "$f"
  ln -sf "$(basename "$f")" "$out/ctopo-beam.tar"
}

declare -A built
build_base
build_pause
build_beam
build_app
# IMAGES_DIR is a folder of this run's own archives: another checkout building into the same
# cache re-points the shared <name>.tar links to its own images (a branch's BEAM image differs),
# and the node must import what this checkout built.
set_dir=$out/sets/$(printf '%s\n' "${built[@]}" | sort | sha256sum | cut -c1-12)
mkdir -p "$set_dir"
for name in "${!built[@]}"; do ln -sfn "../../$(basename "${built[$name]}")" "$set_dir/$name.tar"; done
say "images ready in $((SECONDS - start)) s"
echo "IMAGES_DIR=$set_dir"
