# Sourced by the wasm builds (scripts/build-wasm.sh, scripts/build-web.sh):
# `shrink_wasm FILE` runs binaryen's wasm-opt ($WASM_OPT, the npm one:
# Debian's binaryen 108 emits wasm that fails at start-up) over FILE in
# place, with the passes both builds share.
#
# The --enable flags are the features rustc's wasm32 target emits by
# default and wasm-bindgen keeps; wasm-opt must be allowed to keep them too.
# The passes: -Os, then binaryen's flatten and re-reloop of control flow,
# then -Oz twice, came out smallest gzipped (about 400 bytes below plain -Oz
# for the package, 3,650 for the console). Twice, not --converge (which
# reruns the whole list while the binary shrinks): as small or smaller, in
# half the time (the console's wasm: 33 s against 65 s, 314 bytes fewer
# gzipped). --low-memory-unused lets it fold constant offsets into loads:
# rustc puts the stack first, so the low 1 KiB is the bottom of the 1 MiB
# stack, reached only on the brink of a stack overflow.
shrink_wasm() {
  "$WASM_OPT" --low-memory-unused -Os --flatten --rereloop -Oz -Oz \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-multivalue --enable-reference-types \
    --strip-debug --strip-producers --strip-target-features \
    "$1" -o "$1.opt"
  mv "$1.opt" "$1"
}
