# syntax=docker/dockerfile:1
#
# One image for the operator and the agent:
#   docker build -t cluster-topology:0.1.0 .
#   docker run --rm cluster-topology:0.1.0 operator --help      # ctopo operator
#   docker run --rm cluster-topology:0.1.0 agent --help         # ctopo agent (the sidecar)
#
# Base images are pinned to an exact version (Node.js 24.21.0, the version package.json's
# `node` devDependency runs the tests with; Debian bookworm, the Debian the tests run on).
# Pin them by digest as well when you build: `node:24.21.0-bookworm-slim@sha256:<digest>`. No
# registry was reachable where this file was written, so no digest could be looked up.
#
# tools/image-build-check.sh runs this file's build steps without a Docker engine and checks
# the result; test/unit/packaging checks the properties below.

# ---- build: all dependencies, TypeScript compiled --------------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Dev dependencies too (typescript). The `node` devDependency downloads its Node.js binary here;
# it is only ever used in this stage.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY operator ./operator
COPY crds ./crds
RUN npm run build

# ---- runtime: production dependencies, compiled code, erl_call ------------------------------
FROM node:24.21.0-bookworm-slim AS runtime
# erlang-base provides erl_call, which the agent's erlang connector drives the local BEAM node
# with (the app container's node, reached through epmd on localhost): bookworm's OTP 25, about
# 16 MB installed. Erlang/OTP keeps distribution compatible two major releases either way, so
# this erl_call reaches applications on OTP 23 to 27 — the real node's test drives trixie's
# OTP 27 with it — and not OTP 28 or 29: for those use the OTP library (clients/cluster_topology), or build
# this image on a newer Debian. trixie's erl_call cannot simply be copied in: it needs trixie's
# C library, newer than this bookworm base. A variant for the operator alone, or for agents with
# only the exec or file connectors, can drop this step.
RUN apt-get update \
    && apt-get install -y --no-install-recommends erlang-base \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Production dependencies only: no typescript, jest, eslint, and not the `node` devDependency —
# the base image's node runs the code. No install scripts are needed by them.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force
# What `ctopo operator`, `ctopo agent` and the user commands run, nothing else: dev/, bench/ and
# test/ are not even in the build context (.dockerignore).
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist/operator ./dist/operator
COPY --from=build /src/crds ./crds
# Non-root, numeric (Kubernetes' runAsNonRoot can only check a numeric user). Nothing is
# written outside /tmp (mount an emptyDir there), so a read-only root file system works.
USER 65532:65532
ENV HOME=/tmp
ENTRYPOINT ["node", "/app/bin/ctopo.js"]
CMD ["--help"]
