# syntax=docker/dockerfile:1
# toolgate in a container: Node 20 + ripgrep, runs as the unprivileged "node" user,
# serves the folder mounted at /workspace.
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
# image sets `sandbox.backend: none` in its policy; the container itself is the isolation
# boundary (only /workspace is mounted; run it without --privileged and with --network none
# if the agent needs no network). Results report `sandbox: "none"`.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ripgrep tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/toolgate
COPY package.json package-lock.json ./
# Only web-tree-sitter / tree-sitter-bash (wasm) are loaded from node_modules at run time;
# no native build is needed, hence --ignore-scripts.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY policy.example.yaml ./
RUN chmod 755 dist/cli.js && ln -s /opt/toolgate/dist/cli.js /usr/local/bin/toolgate \
 && mkdir -p /workspace /etc/toolgate && chown node:node /workspace
COPY <<'YAML' /etc/toolgate/toolgate.yaml
# Default policy of the toolgate image. Mount your own over this file to change it.
version: 1
profile: edit
mode: interactive
sandbox:
  backend: none   # no user namespaces in a container: bubblewrap cannot run (see the Dockerfile)
  network: deny
network:
  allow_private: false
YAML

USER node
ENV NODE_ENV=production TOOLGATE_LOG_LEVEL=info
WORKDIR /workspace
EXPOSE 3333
ENTRYPOINT ["tini", "--", "toolgate", "--workspace", "/workspace", "--policy", "/etc/toolgate/toolgate.yaml"]
CMD []
