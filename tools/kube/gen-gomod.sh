#!/usr/bin/env bash
# Regenerates go.mod/go.sum of the wrapper module that builds kube-apiserver, kubectl and the
# node's kubelet, kube-proxy, kube-controller-manager and kube-scheduler.
# Needs the Go module proxy. k8s.io/kubernetes' own go.mod points every staging module at
# ./staging/…, which is not in the module zip, so each is replaced by its published v0.X.Y tag;
# the list is read from the .mod the proxy serves, so a new staging module is picked up.
#
#   tools/kube/gen-gomod.sh                                  # tools/kube: the version every test runs
#   K8S_VERSION=v1.31.14 OUT=tools/kube-oldest TOOLS="kube-apiserver kubectl" tools/kube/gen-gomod.sh
#                                                            # the oldest version CI runs (.ci/run)
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.37.2}
STAGING=v0.${K8S_VERSION#v1.}
TOOLS=${TOOLS:-kube-apiserver kubectl kubelet kube-proxy kube-controller-manager kube-scheduler}
cd "${OUT:-$(dirname "$0")}"
gomod=$(cd "$(mktemp -d)" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
        | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
rm -f go.mod go.sum
go mod init "cluster-topology.invalid/tools/$(basename "$PWD")"
go mod edit -go=1.26.0
{ grep -E '^godebug[[:space:]]' "$gomod" || true; } | sed 's/^godebug[[:space:]]*//' | while read -r kv; do
  go mod edit -godebug="$kv"; done
sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\2#p' "$gomod" |
  while read -r m; do go mod edit -replace="$m=$m@$STAGING"; done
go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
for t in $TOOLS; do go mod edit -tool="k8s.io/kubernetes/cmd/$t"; done
go mod tidy
grep -q "k8s.io/kubernetes $K8S_VERSION" go.mod
