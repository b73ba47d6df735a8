#!/usr/bin/env bash
# The OTP library's matrix: runs its tests (every test file under test/unit/beam-client and
# test/e2e/beam-client) once per cell, the BEAM processes of a cell started inside the cell's
# Debian root (tools/beam/root.sh; CTOPO_BEAM_CELL tells the test helpers which), and prints one
# line per cell with its counts. Exits non-zero when any cell fails.
#
#   tools/beam/cells.sh [cell…]     default: CTOPO_BEAM_CELLS, else every cell when the roots can
#                                   be built (CI=true and root), else otp25 and the cells whose
#                                   roots are already built
# Cells: otp25 (this machine), otp27 (Debian trixie), otp29 (Debian forky). Needs `npm run build`.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=tools/beam/root.sh
all=(otp25 otp27 otp29)
if (( $# )); then
  cells=("$@")
elif [[ -n ${CTOPO_BEAM_CELLS:-} ]]; then
  [[ $CTOPO_BEAM_CELLS == all ]] && cells=("${all[@]}") || read -ra cells <<<"${CTOPO_BEAM_CELLS//,/ }"
elif [[ ${CI:-} == true && $EUID == 0 ]]; then
  cells=("${all[@]}")
else
  cells=(otp25)
  for c in otp27 otp29; do
    if bash $root path "$c" >/dev/null 2>&1; then cells+=("$c"); else
      echo "beam cells: $c left out (its root is not built: tools/beam/root.sh build $c, as root)"
    fi
  done
fi
export PATH="$PWD/node_modules/.bin:$PATH" # the Node.js of node_modules (npm test has it first too)
jest=(node --experimental-vm-modules --no-warnings=ExperimentalWarning node_modules/jest/bin/jest.js)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
summary=()
failed=0
for c in "${cells[@]}"; do
  echo "== BEAM cell $c ($(date -u +%H:%M:%S))"
  t0=$SECONDS
  if ! bash $root build "$c" >/dev/null; then
    summary+=("BEAM cell $c: its root could not be built")
    failed=1
    continue
  fi
  versions=$(bash $root versions "$c")
  echo "   $versions"
  CTOPO_BEAM_CELL=$c "${jest[@]}" --selectProjects unit e2e --testPathPatterns '/beam-client/' \
    --json --outputFile="$out/$c.json"
  rc=$?
  line=$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    process.stdout.write(`${r.numTotalTests} tests in ${r.numTotalTestSuites} files, ` +
      `${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  ' "$out/$c.json" 2>/dev/null || echo "no results")
  (( rc == 0 )) || failed=1
  summary+=("BEAM cell $c ($versions): $line, $((SECONDS - t0)) s$( (( rc == 0 )) || echo ", FAILED (jest exit $rc)")")
done
echo
echo "== BEAM matrix"
printf '%s\n' "${summary[@]}"
exit $failed
