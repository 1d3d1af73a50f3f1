# Sourced by the wasm builds (scripts/build-wasm.sh, scripts/build-web.sh).
# Panic locations name their source files, so a build holds the paths of
# its dependencies' sources, under this machine's cargo home: names them
# from the registry instead (`leptos-0.8.23/src/...`), so the bytes are the
# same on every machine, and fewer.
for src in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  # RUSTFLAGS splits at whitespace: a path with any is left as it is.
  case "$src" in *[[:space:]]*) continue ;; esac
  RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--remap-path-prefix=$src="
done
export RUSTFLAGS
