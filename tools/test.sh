#!/usr/bin/env bash
# `npm test`: jest over the unit, integration and e2e projects; then the OTP library's tests once
# per cell of its matrix (tools/beam/cells.sh: this machine's OTP 25, and OTP 27 and 29 in Debian
# roots when they can be built — CI as root — or are already built), one line of counts per
# cell. With CTOPO_REAL_NODE=1 (set by .ci/run in CI) the real node's project runs last, on its
# own: its node (kubelet, containerd, controllers, pods) is started only then and does not load
# the machine under the other tests. Arguments (`npm test -- --selectProjects unit`) go to one
# jest run as they are.
set -uo pipefail
cd "$(dirname "$0")/.."
jest=(node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js)
if (( $# )); then exec "${jest[@]}" "$@"; fi
"${jest[@]}" --selectProjects unit integration e2e --testPathIgnorePatterns '/beam-client/'
rest=$?
echo "== the OTP library's matrix (tools/beam/cells.sh)"
bash tools/beam/cells.sh
beam=$?
node=0
if [[ ${CTOPO_REAL_NODE:-} == 1 ]]; then
  echo "== the real node's tests (jest project node)"
  "${jest[@]}" --selectProjects node
  node=$?
fi
(( rest == 0 && beam == 0 && node == 0 ))
