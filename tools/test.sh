#!/usr/bin/env bash
# `npm test`: jest over the unit, integration and e2e projects. With CTOPO_REAL_NODE=1 (set by
# .ci/run in CI) the real node's project runs afterwards, on its own: its node (kubelet,
# containerd, controllers, pods) is started only then and does not load the machine under the
# other tests. Arguments (`npm test -- --selectProjects unit`) go to one jest run as they are.
set -uo pipefail
cd "$(dirname "$0")/.."
jest=(node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js)
if (( $# )) || [[ ${CTOPO_REAL_NODE:-} != 1 ]]; then exec "${jest[@]}" "$@"; fi
"${jest[@]}" --selectProjects unit integration e2e
rest=$?
echo "== the real node's tests (jest project node)"
"${jest[@]}" --selectProjects node
node=$?
(( rest == 0 && node == 0 ))
