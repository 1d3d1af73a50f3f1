#!/usr/bin/env bash
# Builds the console's container image from the Containerfile at the
# repository's root: a static gco-console (x86_64-unknown-linux-musl), the
# built console (dist/) and CA certificates, on no base image (FROM scratch),
# running as an unprivileged user on 0.0.0.0:8080.
#
# Stages target/image/rootfs, then builds with `docker build` when a Docker
# daemon answers, else with Debian's buildah (daemonless: vfs storage, chroot
# isolation), installing buildah when neither is there. Tags the image
# localhost/gco-console:latest (GCO_IMAGE to change it) and prints the
# image's reference as its last line; everything else goes to stderr.
#
#   --stage-only   stage target/image/rootfs and stop (what `cdk deploy`
#                  needs when Docker builds the asset itself)
#
# Environment: GCO_IMAGE (the tag), GCO_IMAGE_PROFILE (the cargo profile,
# default `quick-release`: see Cargo.toml), GCO_IMAGE_BUILDER (docker or buildah, to
# choose instead of detecting), CARGO_TARGET_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

IMAGE=${GCO_IMAGE:-localhost/gco-console:latest}
PROFILE=${GCO_IMAGE_PROFILE:-quick-release}
TARGET=x86_64-unknown-linux-musl
STAGE=target/image/rootfs
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
STAGE_ONLY=; [ "${1:-}" = --stage-only ] && STAGE_ONLY=1
log() { printf '[image] %s\n' "$*" >&2; }
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
apt_install() {
  log "installing $* (apt-get)"
  $SUDO apt-get update -qq >&2 &&
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# 1. The static binary.
if ! rustup target list --installed | grep -qx "$TARGET"; then
  log "adding the $TARGET target"
  rustup target add "$TARGET" >&2
fi
# aws-lc-sys and mimalloc compile C for the target: Debian's musl-tools
# gives cc-rs the x86_64-linux-musl-gcc it looks for.
if ! command -v x86_64-linux-musl-gcc >/dev/null; then
  apt_install musl-tools
fi
log "cargo build -p gco-console --target $TARGET --profile $PROFILE"
cargo build -q -p gco-console --bin gco-console --target "$TARGET" --profile "$PROFILE" >&2
BIN="${CARGO_TARGET_DIR:-target}/$TARGET/$PROFILE/gco-console"
if file_out=$(file -b "$BIN" 2>/dev/null) && ! grep -q 'static' <<<"$file_out"; then
  log "$BIN is not statically linked: $file_out"
  exit 1
fi

# 2. The console (dist/), built when missing or older than its sources (as
# scripts/test-e2e.sh decides).
if [ ! -f dist/index.html ] ||
  [ -n "$(find web core/src index.html Cargo.lock -newer dist/index.html -type f -print -quit 2>/dev/null)" ]; then
  log "building the console: scripts/build-web.sh"
  bash scripts/build-web.sh >&2
fi

# 3. CA certificates for TLS to AWS (rustls reads SSL_CERT_FILE, set in the
# Containerfile).
if [ ! -s "$CA_BUNDLE" ]; then
  apt_install ca-certificates
fi

# 4. The image's whole file system.
rm -rf "$STAGE"
mkdir -p "$STAGE/usr/local/bin" "$STAGE/srv/gco-console" "$STAGE/etc/ssl/certs"
cp "$BIN" "$STAGE/usr/local/bin/gco-console"
cp -R dist "$STAGE/srv/gco-console/dist"
cp "$CA_BUNDLE" "$STAGE/etc/ssl/certs/ca-certificates.crt"
# The user the Containerfile names by number, so tools show a name.
printf 'root:x:0:0:root:/:/sbin/nologin\ngco:x:65532:65532:gco-console:/nonexistent:/sbin/nologin\n' >"$STAGE/etc/passwd"
printf 'root:x:0:\ngco:x:65532:\n' >"$STAGE/etc/group"
chmod -R a+rX,go-w "$STAGE"
log "staged $STAGE ($(du -sb "$STAGE" | cut -f1) bytes)"
[ -n "$STAGE_ONLY" ] && { echo "$STAGE"; exit 0; }

# 5. The image.
builder=${GCO_IMAGE_BUILDER:-}
if [ -z "$builder" ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    builder=docker
  else
    builder=buildah
  fi
fi
case "$builder" in
docker)
  log "docker build -f Containerfile -t $IMAGE ."
  docker build -q -f Containerfile -t "$IMAGE" . >&2
  size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
  ;;
buildah)
  command -v buildah >/dev/null || apt_install buildah
  # No daemon: vfs storage works on any file system, chroot isolation in
  # any container this runs in. Every buildah call here uses the same.
  previous=$(buildah --storage-driver vfs images -q --no-trunc "$IMAGE" 2>/dev/null || true)
  log "buildah bud --isolation chroot -f Containerfile -t $IMAGE ."
  buildah --storage-driver vfs bud -q --isolation chroot --layers=false -f Containerfile -t "$IMAGE" . >&2
  # The image the tag named before, now untagged, is dropped (vfs keeps
  # whole copies).
  current=$(buildah --storage-driver vfs images -q --no-trunc "$IMAGE")
  if [ -n "$previous" ] && [ "$previous" != "$current" ]; then
    buildah --storage-driver vfs rmi "$previous" >/dev/null 2>&1 || true
  fi
  # The image's bytes: its layers and its config, as its manifest lists them.
  size=$(buildah --storage-driver vfs inspect --type image -f '{{.Manifest}}' "$IMAGE" |
    python3 -c 'import json, sys; m = json.load(sys.stdin); print(m["config"]["size"] + sum(l["size"] for l in m["layers"]))')
  ;;
*)
  log "GCO_IMAGE_BUILDER must be docker or buildah, not $builder"
  exit 2
  ;;
esac
log "built $IMAGE with $builder: $size bytes"
echo "$IMAGE"
