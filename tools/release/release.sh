#!/usr/bin/env bash
# `npm run release`: every artifact of a release, built from the committed tree, in
# release/<version>/ (gitignored):
#
#   cluster-topology-<v>-image.oci.tar     the image, an OCI archive built by buildah from the Dockerfile
#   cluster-topology-<v>-image.digest      its manifest digest (sha256:…), the one the chart pins
#   cluster-topology-<v>-image.dpkg.txt    the Debian packages in the image (name, version, architecture)
#   cluster-topology-<v>.tgz               the Helm chart (helm package), its default image pinned by digest
#   cluster-topology-<v>-npm.tgz           the npm package (npm pack): the ctopo CLI and kubectl plugin
#   cluster-topology-<v>-npm.cdx.json      an SBOM of the npm package's dependencies (npm sbom, CycloneDX)
#   cluster_topology-<v>.tar               the OTP library's Hex package (tools/beam/hex-build.sh)
#   cluster_topology-<v>-doc.tar.gz        its documentation (ex_doc HTML), beside it
#   cluster_topology-<v>-src.tar.gz        the OTP library's source (clients/cluster_topology)
#   cluster-topology-<v>-src.tar.gz        the repository's source (git archive)
#   RELEASE                                version, commit, date, image reference and digest
#   SHA256SUMS                             over all of the above: cd release/<v> && sha256sum -c SHA256SUMS
#
# It refuses to run on a tree with uncommitted or untracked files: everything is built from the
# commit (git archive), never from the working tree. The commit is named in the image's OCI labels
# (org.opencontainers.image.revision), the chart's annotations (cluster.netzlive.io/commit), the
# source tarballs' git header (git get-tar-commit-id) and RELEASE.
#
# Needs root (buildah builds the image in a chroot), buildah, helm (tools/build-binaries.sh helm)
# and, while the image is built, the npm registry and Debian's archive. The image's base is built
# locally as the real node's images are (tools/node/images.sh): no registry is pulled from.
# CTOPO_RELEASE_DRY_RUN=1 stops after the tree check.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
say() { echo "release: $*" >&2; }
die() { echo "release: $*" >&2; exit 1; }

dirty=$(git status --porcelain --untracked-files=normal)
[[ -z $dirty ]] || die "the working tree is not clean; commit or stash first (a release is built from a commit):
$dirty"
say "clean tree at $(git rev-parse --short HEAD)"
[[ ${CTOPO_RELEASE_DRY_RUN:-} == 1 ]] && exit 0   # only the checks above
(( EUID == 0 )) || die "building the image needs root (buildah, chroot isolation)"
command -v buildah >/dev/null || die "buildah is needed (apt-get install buildah)"

version=$(node -p 'require("./package.json").version')
commit=$(git rev-parse HEAD)
epoch=$(git show -s --format=%ct HEAD)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
image_repo=ghcr.io/netzlive/cluster-topology
image=$image_repo:$version
out=$repo/release/$version
name=cluster-topology-$version
cache=${CTOPO_CACHE_DIR:-$HOME/.cache/cluster-topology}
store=(--root "$cache/containers/storage" --runroot /run/ctopo-containers --storage-driver overlay)
bh() { buildah "${store[@]}" "$@"; }
start=$SECONDS

work=$(mktemp -d /tmp/ctopo-release-XXXXXX)
container=
cleanup() {
  [[ -n $container ]] && bh rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

say "$version from commit $commit ($created) into release/$version/"
rm -rf "$out"
mkdir -p "$out"
src=$work/cluster-topology   # named as the package: npm sbom names the root component after it
mkdir -p "$src"
git archive --format=tar HEAD | tar -x -C "$src"

# ---- the source tarballs ------------------------------------------------------------------
git archive --format=tar.gz --prefix="$name/" -o "$out/$name-src.tar.gz" HEAD
lib=clients/cluster_topology   # the OTP library's folder
git archive --format=tar.gz --prefix="cluster_topology-$version/" --add-file=LICENSE \
  -o "$out/cluster_topology-$version-src.tar.gz" "HEAD:$lib"

# ---- the npm package and its SBOM, from the commit with its own npm ci ----------------------
say "npm ci and npm pack in a clean copy of the commit"
(cd "$src" && npm ci --no-audit --no-fund --loglevel=error >&2 && npm pack --silent --pack-destination "$work" >/dev/null)
mv "$work/$name.tgz" "$out/$name-npm.tgz"
(cd "$src" && npm sbom --omit dev --sbom-format cyclonedx --sbom-type application) >"$out/$name-npm.cdx.json"

# ---- the image -----------------------------------------------------------------------------
node_version=$("$src/node_modules/.bin/node" -p process.versions.node)
base_tag=node:$node_version-bookworm-slim   # the Dockerfile's FROM, built locally by tools/node/images.sh
has_base() { bh inspect --type image "localhost/$base_tag" >/dev/null 2>&1 || bh inspect --type image "docker.io/library/$base_tag" >/dev/null 2>&1; }
if ! has_base; then
  say "the Dockerfile's base $base_tag is not in the local store: building it (tools/node/images.sh)"
  bash tools/node/images.sh >/dev/null
  has_base || die "tools/node/images.sh left no $base_tag in $cache/containers/storage"
fi
say "building the image from the Dockerfile with buildah (npm ci inside; a few minutes)"
ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
npmrc=$work/npmrc
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n' >"$npmrc"
# The build context is the commit as committed; .dockerignore picks what the image gets from it.
mkdir "$work/context"
git archive --format=tar HEAD | tar -x -C "$work/context"
bh bud --quiet --pull=never --network=host --isolation=chroot --layers=false --timestamp "$epoch" \
  -v "$ca:/etc/ssl/certs/ca-certificates.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro" \
  --label org.opencontainers.image.title=cluster-topology \
  --label "org.opencontainers.image.description=The cluster-topology operator and its sidecar agent (ctopo)" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$commit" \
  --label "org.opencontainers.image.created=$created" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  --label org.opencontainers.image.source=https://github.com/netzlive/cluster-topology \
  --label "org.opencontainers.image.base.name=$base_tag" \
  -t "$image" -f "$work/context/Dockerfile" "$work/context" >/dev/null
bh push --quiet --digestfile "$work/digest" "$image" "oci-archive:$out/$name-image.oci.tar:$image" >/dev/null
digest=$(cat "$work/digest")
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "buildah wrote no manifest digest ($digest)"
echo "$digest" >"$out/$name-image.digest"
container=$(bh from --pull=never "$image")
mnt=$(bh mount "$container")
dpkg-query --admindir="$mnt/var/lib/dpkg" -W -f '${Package}\t${Version}\t${Architecture}\n' | sort >"$out/$name-image.dpkg.txt"
bh umount "$container" >/dev/null
bh rm "$container" >/dev/null
container=

# ---- the chart: its default image is the one just built, pinned by digest --------------------
helm=$(bash tools/build-binaries.sh helm 2>/dev/null | sed -n 's/^HELM_DIR=//p')/helm
[[ -x $helm ]] || die "helm is needed (tools/build-binaries.sh helm)"
chart=$work/chart/cluster-topology
mkdir -p "$work/chart"
cp -r "$src/charts/cluster-topology" "$chart"
cp "$src/LICENSE" "$chart/LICENSE"
grep -q "^  digest: ''$" "$chart/values.yaml" || die "charts/cluster-topology/values.yaml has no empty image.digest to pin"
sed -i "s|^  digest: ''$|  digest: '$digest'|" "$chart/values.yaml"
grep -q '^annotations:$' "$chart/Chart.yaml" || die "charts/cluster-topology/Chart.yaml has no annotations: to add the commit to"
sed -i "s|^annotations:$|annotations:\n  cluster.netzlive.io/commit: '$commit'\n  cluster.netzlive.io/image: '$image_repo@$digest'|" "$chart/Chart.yaml"
export HELM_CACHE_HOME=$work/helm/cache HELM_CONFIG_HOME=$work/helm/config HELM_DATA_HOME=$work/helm/data
"$helm" lint --strict "$chart" >/dev/null || die "helm lint --strict failed on the staged chart"
"$helm" package --version "$version" --app-version "$version" -d "$out" "$chart" >/dev/null
[[ -f $out/$name.tgz ]] || die "helm package wrote no $name.tgz"

# ---- the OTP library's Hex package ---------------------------------------------------------
hex=tools/beam/hex-build.sh
say "the Hex package ($hex)"
# Run in the checkout (the script lists the library's files with git): it is the commit, as
# checked at the start.
bash "$repo/$hex" "$work/hex" >&2 || die "$hex failed"
mv "$work/hex/cluster_topology-$version.tar" "$out/" || die "$hex wrote no cluster_topology-$version.tar"
[[ -d $work/hex/doc ]] || die "$hex wrote no doc/"
tar -czf "$out/cluster_topology-$version-doc.tar.gz" -C "$work/hex" doc

# ---- what was released, and the checksums ---------------------------------------------------
cat >"$out/RELEASE" <<EOF
version: $version
commit: $commit
date: $created
image: $image
image digest: $digest
image by digest: $image_repo@$digest
EOF
(cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
say "done in $((SECONDS - start)) s:"
(cd "$out" && ls -l | tail -n +2) >&2
echo "RELEASE_DIR=$out"
