#!/usr/bin/env bash
# Regenerates go.mod/go.sum of the wrapper module that builds containerd 2, its runc shim and ctr
# for the real node (tools/build-binaries.sh containerd). Needs the Go module proxy.
set -euo pipefail
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
cd "$(dirname "$0")"
rm -f go.mod go.sum
go mod init cluster-topology.invalid/tools/containerd
go mod edit -go=1.26.0
go mod edit -require="github.com/containerd/containerd/v2@$CONTAINERD_VERSION"
go mod edit -tool=github.com/containerd/containerd/v2/cmd/containerd \
  -tool=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  -tool=github.com/containerd/containerd/v2/cmd/ctr
go mod tidy
grep -q "github.com/containerd/containerd/v2 $CONTAINERD_VERSION" go.mod
