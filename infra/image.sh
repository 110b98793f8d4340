#!/usr/bin/env bash
# The production image, built here with Debian's podman (what `make image` runs).
#
#   infra/image.sh build    build localhost/shutterbus:local from infra/production/Dockerfile
#   infra/image.sh conf     print the containers.conf path (export CONTAINERS_CONF=... to use it)
#
# Installs what is missing (Debian podman, buildah, debootstrap, runc). The Dockerfile starts FROM
# debian:bookworm-slim; where that image is not in podman's store and cannot be pulled (machines that
# reach only Debian's and npm's package servers), it is made here from Debian's own packages with
# debootstrap --variant=minbase and tagged debian:bookworm-slim, so the Dockerfile operators build is
# the same file. Settings (environment): DATA_DIR (.data), IMAGE (localhost/shutterbus:local),
# DEBIAN_MIRROR (http://deb.debian.org/debian), NPM_REGISTRY (https://registry.npmjs.org),
# CA_BUNDLE (/etc/ssl/certs/ca-certificates.crt).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DATA_DIR="${DATA_DIR:-.data}"
mkdir -p "$DATA_DIR"
DATA_DIR="$(cd "$DATA_DIR" && pwd)"
IMAGE="${IMAGE:-localhost/shutterbus:local}"
BASE_IMAGE=docker.io/library/debian:bookworm-slim
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NPM_REGISTRY="${NPM_REGISTRY:-https://registry.npmjs.org}"
NODE_VERSION="$(tr -d '[:space:]' < .node-version)"
# The certificates this machine trusts, handed to the build's downloads from the npm registry (a
# network may sign its proxy's certificates with a CA of its own); kept in no layer of the image.
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

say() { printf 'image: %s\n' "$*" >&2; }
fail() { printf 'image: error: %s\n' "$*" >&2; exit 1; }

# Facts of these machines, for every podman command (CONTAINERS_CONF): cgroups are hybrid (v1), which
# crun refuses, so runc; the hard limits of open files and processes are below podman's defaults.
CONTAINERS_CONF_FILE="$DATA_DIR/containers/containers.conf"
write_containers_conf() {
  mkdir -p "$(dirname "$CONTAINERS_CONF_FILE")"
  cat >"$CONTAINERS_CONF_FILE.tmp" <<'EOF'
# Written by infra/image.sh: podman's settings on this machine (CONTAINERS_CONF names this file).
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
  mv "$CONTAINERS_CONF_FILE.tmp" "$CONTAINERS_CONF_FILE"
  export CONTAINERS_CONF="$CONTAINERS_CONF_FILE"
}

ensure_tools() {
  local missing=()
  command -v podman >/dev/null 2>&1 || missing+=(podman)
  command -v buildah >/dev/null 2>&1 || missing+=(buildah)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local sudo=()
  if [[ $EUID -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || fail "missing Debian packages (${missing[*]}); install them as root: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# debian:bookworm-slim from Debian's packages, as the official image is made: minbase, the three
# bookworm suites in deb822 form, no apt lists, no documentation.
ensure_base_image() {
  podman image exists "$BASE_IMAGE" && return 0
  if podman pull --quiet "$BASE_IMAGE" >/dev/null 2>&1; then return 0; fi
  [[ $EUID -eq 0 ]] || fail "$BASE_IMAGE cannot be pulled and debootstrap needs root to make it"
  local rootfs="$DATA_DIR/containers/bookworm-rootfs"
  say "making $BASE_IMAGE with debootstrap --variant=minbase bookworm ($DEBIAN_MIRROR)"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$DATA_DIR/containers/debootstrap.log" 2>&1 \
    || fail "debootstrap failed; see $DATA_DIR/containers/debootstrap.log"
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${DEBIAN_MIRROR}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${DEBIAN_MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # As the official slim image: no documentation is installed by later apt-get installs.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
  tar --numeric-owner --xattrs -C "$rootfs" -c . \
    | podman import --change 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  say "tagged $BASE_IMAGE"
}

build() {
  ensure_tools
  write_containers_conf
  ensure_base_image
  local version revision
  version="$(node -p 'require("./package.json").version' 2>/dev/null || sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)"
  revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
  local source_args=() origin
  origin="$(git config --get remote.origin.url 2>/dev/null || true)"
  # An https origin without credentials in it; else the Dockerfile's default.
  if [[ "$origin" == https://* && "$origin" != *@* ]]; then source_args=(--build-arg "SOURCE=${origin%.git}"); fi
  say "building $IMAGE (Node $NODE_VERSION, revision ${revision:0:12})"
  # The context's leave-outs are infra/production/Dockerfile.dockerignore (podman reads
  # .containerignore and .dockerignore at the context's root: both name that file's rules).
  podman build --network host --layers \
    --file infra/production/Dockerfile \
    --ignorefile infra/production/Dockerfile.dockerignore \
    --build-arg "NODE_VERSION=$NODE_VERSION" \
    --build-arg "NPM_REGISTRY=$NPM_REGISTRY" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" \
    "${source_args[@]}" \
    --secret "id=ca-bundle,src=$CA_BUNDLE" \
    --tag "$IMAGE" .
}

case "${1:-}" in
  build) build ;;
  base) ensure_tools; write_containers_conf; ensure_base_image ;;
  conf) write_containers_conf; echo "$CONTAINERS_CONF_FILE" ;;
  *) echo "usage: $0 build|conf" >&2; exit 2 ;;
esac
