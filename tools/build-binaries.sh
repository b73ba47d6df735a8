#!/usr/bin/env bash
# Builds the real Kubernetes binaries the tests and the demo run (kube-apiserver, kubectl, etcd,
# helm) from the Go module proxy, through the wrapper modules beside this script, and caches
# each under ${CTOPO_CACHE_DIR:-~/.cache/cluster-topology}/<tool>-<version>/. A cached binary is
# never rebuilt. Binaries are never written into the repository.
#
#   tools/build-binaries.sh [kube] [etcd] [helm] [controller-manager] [node] [containerd] [oldest]   # default: kube etcd helm
#
# `node` builds what the real node of `npm run dev-cluster -- up --node` runs beside the API server:
# kubelet, kube-proxy, kube-controller-manager and kube-scheduler (same module as kube-apiserver);
# `containerd` builds containerd 2 and its runc shim (tools/containerd). `oldest` builds the
# kube-apiserver and kubectl of the oldest Kubernetes the docs claim (tools/kube-oldest) and the
# etcd that version ships with (tools/etcd-oldest), and links the three into OLDEST_DIR: CI runs
# the integration suite once more against them (KUBEBUILDER_ASSETS=$OLDEST_DIR).
#   tools/build-binaries.sh --print-dirs             # prints KEY=DIR lines, builds nothing
#
# Progress (what is being built, elapsed seconds) goes to stderr; the last stdout lines are
# KUBE_DIR=…, ETCD_DIR=…, HELM_DIR=… for the caller.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${CTOPO_CACHE_DIR:-$HOME/.cache/cluster-topology}

modver() { sed -n "s#^[[:space:]]*$2 \(v[^ ]*\).*#\1#p" "$here/$1/go.mod" | head -n1; }
K8S_VERSION=$(modver kube k8s.io/kubernetes)
ETCD_VERSION=$(modver etcd go.etcd.io/etcd/server/v3)
HELM_VERSION=$(modver helm helm.sh/helm/v3)
KUBE_DIR=$cache/kube-$K8S_VERSION
ETCD_DIR=$cache/etcd-$ETCD_VERSION
HELM_DIR=$cache/helm-$HELM_VERSION
CONTAINERD_VERSION=$(modver containerd github.com/containerd/containerd/v2)
CONTAINERD_DIR=$cache/containerd-$CONTAINERD_VERSION
OLDEST_K8S_VERSION=$(modver kube-oldest k8s.io/kubernetes)
OLDEST_ETCD_VERSION=$(modver etcd-oldest go.etcd.io/etcd/server/v3)
OLDEST_DIR=$cache/oldest-$OLDEST_K8S_VERSION-etcd-$OLDEST_ETCD_VERSION

print_dirs() { printf 'KUBE_DIR=%s\nETCD_DIR=%s\nHELM_DIR=%s\nCONTAINERD_DIR=%s\nOLDEST_DIR=%s\n' "$KUBE_DIR" "$ETCD_DIR" "$HELM_DIR" "$CONTAINERD_DIR" "$OLDEST_DIR"; }
if [[ ${1:-} == --print-dirs ]]; then print_dirs; exit 0; fi

command -v go >/dev/null || { echo "build-binaries: Go is needed to build the test control plane (https://go.dev/doc/install)" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=${GOFLAGS:-} GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# build <module dir> <output file> <package> <ldflags> [tags]: go build with an elapsed-time ticker.
build() {
  local dir=$1 out=$2 pkg=$3 ld=$4 tags=${5:-selinux,notest,grpcnotrace} start=$SECONDS tmp
  if [[ -x $out ]]; then echo "build-binaries: $(basename "$out") cached at $out" >&2; return 0; fi
  mkdir -p "$(dirname "$out")"
  tmp=$out.tmp.$$
  echo "build-binaries: building $(basename "$out") from $pkg (first time only; several minutes on 2 cores)" >&2
  ( while :; do sleep 20 || true; echo "build-binaries:   … $(basename "$out") still building, $((SECONDS - start)) s" >&2; done ) &
  local ticker=$!
  local rc=0
  (cd "$here/$dir" && go build -trimpath -pgo=off -tags="$tags" -ldflags "$ld" -o "$tmp" "$pkg") || rc=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  if (( rc != 0 )); then rm -f "$tmp"; echo "build-binaries: building $pkg failed" >&2; return "$rc"; fi
  mv -f "$tmp" "$out"   # atomic: a half-written binary is never taken for a cached one
  echo "build-binaries: built $(basename "$out") in $((SECONDS - start)) s" >&2
}

kube_ldflags() { # [version]: the k8s.io/kubernetes version built (default K8S_VERSION)
  local v=${1:-$K8S_VERSION} minor ld="-s -w" p
  minor=$(cut -d. -f2 <<<"$v")
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ld"
}

helm_ldflags() {
  local minor ld="-s -w"
  minor=$(cut -d. -f2 <<<"$K8S_VERSION")
  ld+=" -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  ld+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
  ld+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
  echo "$ld"
}

# Without cgo: the btrfs/devmapper snapshotters need it and the node uses overlayfs.
CONTAINERD_TAGS=no_btrfs,no_devmapper,no_zfs,netgo,osusergo
containerd_ldflags() {
  echo "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"
}

targets=("$@"); (( ${#targets[@]} )) || targets=(kube etcd helm)
for t in "${targets[@]}"; do
  case $t in
    kube)
      build kube "$KUBE_DIR/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$(kube_ldflags)"
      build kube "$KUBE_DIR/kubectl" k8s.io/kubernetes/cmd/kubectl "$(kube_ldflags)" ;;
    controller-manager)   # alone: the garbage collector of a test control plane
      build kube "$KUBE_DIR/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager "$(kube_ldflags)" ;;
    node)
      for c in kubelet kube-proxy kube-controller-manager kube-scheduler; do
        build kube "$KUBE_DIR/$c" "k8s.io/kubernetes/cmd/$c" "$(kube_ldflags)"
      done ;;
    containerd)
      build containerd "$CONTAINERD_DIR/containerd" github.com/containerd/containerd/v2/cmd/containerd "$(containerd_ldflags)" "$CONTAINERD_TAGS"
      build containerd "$CONTAINERD_DIR/containerd-shim-runc-v2" github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "$(containerd_ldflags)" "$CONTAINERD_TAGS"
      build containerd "$CONTAINERD_DIR/ctr" github.com/containerd/containerd/v2/cmd/ctr "$(containerd_ldflags)" "$CONTAINERD_TAGS" ;;
    etcd) build etcd "$ETCD_DIR/etcd" go.etcd.io/etcd/server/v3 "-s -w" ;;
    oldest)
      od=$cache/kube-$OLDEST_K8S_VERSION; oe=$cache/etcd-$OLDEST_ETCD_VERSION
      build kube-oldest "$od/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$(kube_ldflags "$OLDEST_K8S_VERSION")"
      build kube-oldest "$od/kubectl" k8s.io/kubernetes/cmd/kubectl "$(kube_ldflags "$OLDEST_K8S_VERSION")"
      build etcd-oldest "$oe/etcd" go.etcd.io/etcd/server/v3 "-s -w"
      mkdir -p "$OLDEST_DIR"
      ln -sfn "$od/kube-apiserver" "$OLDEST_DIR/kube-apiserver"
      ln -sfn "$od/kubectl" "$OLDEST_DIR/kubectl"
      ln -sfn "$oe/etcd" "$OLDEST_DIR/etcd" ;;
    helm) build helm "$HELM_DIR/helm" helm.sh/helm/v3/cmd/helm "$(helm_ldflags)" ;;
    *) echo "build-binaries: unknown target '$t' (kube, etcd, helm, controller-manager, node, containerd, oldest)" >&2; exit 64 ;;
  esac
done
print_dirs
