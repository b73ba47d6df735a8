#!/usr/bin/env bash
# Proves what can be proved about the container image without a Docker engine: runs the
# Dockerfile's stages in a clean copy of the build context (npm ci, npm run build, then
# npm ci --omit=dev for the final stage; apt-get steps are reported, not run), checks that no dev
# dependency reached the final node_modules and that the compiled code needs nothing else, and
# starts `ctopo --help`, `ctopo operator --help` (and `ctopo agent --help` once that command
# exists) from the result as the image's non-root user, with the result read-only.
#
#   tools/image-build-check.sh              # the working tree (tracked + untracked, not ignored)
#   tools/image-build-check.sh --ref HEAD   # a commit instead
#   tools/image-build-check.sh --keep       # keep the temporary directory for a look
#   tools/image-build-check.sh --dockerfile FILE   # another Dockerfile, same context
#
# The base image's Node.js is stood in for by CTOPO_IMAGE_NODE, else the package's own Node.js 24
# (node_modules/.bin/node, from `npm ci`), else `node` on PATH. Network: npm's registry (or cache).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=${CTOPO_IMAGE_NODE:-}
if [[ -z $node ]]; then
  if [[ -x $here/../node_modules/node/bin/node ]]; then node=$here/../node_modules/node/bin/node
  else node=$(command -v node || true); fi
fi
[[ -n $node ]] || { echo "image-build-check: no Node.js found (run npm ci, or set CTOPO_IMAGE_NODE)" >&2; exit 1; }
command -v npm >/dev/null || { echo "image-build-check: npm is needed" >&2; exit 1; }
command -v git >/dev/null || { echo "image-build-check: git is needed" >&2; exit 1; }
export CTOPO_IMAGE_NODE=$node
exec "$node" "$here/image-build-check.mjs" "$@"
