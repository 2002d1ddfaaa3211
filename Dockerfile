# toolgate in a container: Node 20 + ripgrep, runs as the unprivileged "node" user,
# serves the folder mounted at /workspace.
#
# Plain Dockerfile syntax on purpose (no heredocs, no "# syntax" line, no COPY --chmod/--link,
# no RUN --mount): it builds with the classic builder and BuildKit alike, and with buildah
# (tests/contract/dockerfile.test.ts checks this).
#
#   docker build -t toolgate .
#   # stdio (what a client launches):
#   docker run --rm -i --user "$(id -u):$(id -g)" -v "$PWD:/workspace" toolgate
#   # HTTP (publish on the host's loopback only; a token is required off loopback):
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/workspace" -e TOOLGATE_TOKEN \
#     -p 127.0.0.1:3333:3333 toolgate --transport http --host 0.0.0.0
#   # your own policy: mount it over /etc/toolgate/toolgate.yaml (read-only)
#
# Why the bubblewrap sandbox is off in here: bubblewrap needs unprivileged user namespaces
# (and mount/pid namespaces), which Docker's default seccomp profile and capability set
# forbid inside a container. Rather than ship a sandbox that fails on every command, the
# image's policy (docker/policy.yaml) sets `sandbox.backend: none`; the container itself is
# the isolation boundary (only /workspace is mounted; run it without --privileged and with
# --network none if the agent needs no network). Results report `sandbox: "none"`.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ripgrep tini ca-certificates iproute2 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/toolgate
COPY package.json package-lock.json ./
# Only web-tree-sitter / tree-sitter-bash (wasm) are loaded from node_modules at run time;
# no native build is needed, hence --ignore-scripts.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY policy.example.yaml ./
COPY docker/policy.yaml /etc/toolgate/toolgate.yaml
RUN chmod 755 dist/cli.js && chmod 644 /etc/toolgate/toolgate.yaml \
 && ln -s /opt/toolgate/dist/cli.js /usr/local/bin/toolgate \
 && mkdir -p /workspace && chown node:node /workspace

USER node
# Grants and pins (user state) go to a writable place whatever --user is; mount a volume
# there to keep "allow always" answers across containers.
ENV NODE_ENV=production TOOLGATE_LOG_LEVEL=info XDG_STATE_HOME=/tmp/toolgate-state
WORKDIR /workspace
EXPOSE 3333
ENTRYPOINT ["tini", "--", "toolgate", "--workspace", "/workspace", "--policy", "/etc/toolgate/toolgate.yaml"]
CMD []
