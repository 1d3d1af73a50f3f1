//! The JS/TS API of the validator (wasm-bindgen), built by
//! `scripts/build-wasm.sh` into `core/pkg/web` and `core/pkg/node`.
//!
//! A thin layer: each function reads its JS arguments, calls the core and
//! hands the answer back as plain JS objects. No rule lives here. It checks
//! `mooncake` blocks only: whole documents (specs, deploy requests, records)
//! are checked natively (the CLI, the backend), which keeps the package
//! small (its gzipped size has a budget: scripts/build-wasm.sh). For the
//! same reason JS values cross by hand with js_sys rather than serde, and
//! the crate's own allocator (below) replaces std's.
//!
//! Invalid blocks and bad values are answers (`ok: false`); only misuse
//! throws a `TypeError` (an argument of the wrong JS type, a missing
//! argument, an unknown option name, a value that is not JSON-like: a
//! function, a symbol, a `Map` or other iterable that is not an array, a
//! cyclic or too deeply nested object, a BigInt beyond 64 bits).
//!
//! The TypeScript declarations are written by hand below, so the generated
//! `.d.ts` has real interfaces; keep them in step with the shapes built here.

use js_sys::{Array, BigInt, Object, Reflect, Symbol};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::diagnostics::{Diagnostic, Report};
use crate::json::{self, Int, MAX_DEPTH, Value};
use crate::mooncake::{BuildArgs, build_mooncake_block};
use crate::{ByteSizeArg, author_byte_size, check_mooncake};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** One problem: a dotted field path (`mooncake.topology.prefill`; `""` for text that is not JSON) and its message. */
export interface Diagnostic {
  path: string;
  message: string;
}

/**
 * What `validate` and `validateJson` answer for a `mooncake` block. `ok` is
 * false when there is at least one error; warnings never make it false.
 * Errors come in the reference's order: the first is the message GCO's
 * Python validator (`validate_mooncake_spec`) gives.
 */
export interface ValidationResult {
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

/** A value, or the reference's message saying why there is none. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export type MooncakeMode = "both" | "disaggregated" | "store";

/** Counts of a split (`both`, `disaggregated`) topology, each in [1, 1000]. */
export interface MooncakeTopology {
  prefill: number;
  decode: number;
  [key: string]: unknown;
}

export interface MooncakeStore {
  enabled?: unknown;
  /** A canonical decimal byte count, e.g. "4294967296". */
  global_segment_size?: string;
  /** A canonical decimal byte count. */
  local_buffer_size?: string;
  cold_tier_enabled?: unknown;
  [key: string]: unknown;
}

export interface MooncakeTransfer {
  protocol?: "rdma" | "tcp";
  device_name?: string;
  [key: string]: unknown;
}

export interface MooncakeProxy {
  image?: unknown;
  scheduling?: unknown;
  [key: string]: unknown;
}

export interface MooncakeRoleBounds {
  /** An integer >= 1; a bigint beyond 2^53. */
  min_replicas?: number | bigint | null;
  /** An integer >= min_replicas; a bigint beyond 2^53. */
  max_replicas?: number | bigint | null;
  [key: string]: unknown;
}

export interface MooncakeAutoscaling {
  enabled?: unknown;
  prefill?: MooncakeRoleBounds | null;
  decode?: MooncakeRoleBounds | null;
  [key: string]: unknown;
}

/**
 * A valid `mooncake` block as `buildMooncakeBlock` makes it. Keys GCO does
 * not know are kept (they are warnings, not errors), hence the index
 * signatures.
 */
export interface MooncakeBlock {
  mode: MooncakeMode;
  topology?: MooncakeTopology;
  store?: MooncakeStore;
  transfer?: MooncakeTransfer;
  proxy?: MooncakeProxy;
  autoscaling?: MooncakeAutoscaling;
  [key: string]: unknown;
}

/**
 * The arguments of the reference's `_build_mooncake_block`, in camelCase.
 * Only `mode` is required; an absent (or `undefined`) option takes the
 * reference's default (replicas 1, nothing else). `null` is passed on as
 * Python's `None`. Values of the wrong kind are reported, not thrown; an
 * option name not listed here throws.
 */
export interface BuildOptions {
  mode: MooncakeMode | (string & {}) | null;
  prefillReplicas?: number | bigint | null;
  decodeReplicas?: number | bigint | null;
  store?: Record<string, unknown> | null;
  transfer?: Record<string, unknown> | null;
  proxy?: Record<string, unknown> | null;
  autoscaling?: Record<string, unknown> | null;
  /** Split modes default `proxy.image` to this when it is truthy. */
  defaultProxyImage?: string | null;
}

/**
 * `buildMooncakeBlock`'s answer: the block, with `json` its text as Python's
 * `json.dumps` writes it (exact even for integers a JS number cannot hold);
 * or the reference's message, the path of the field at fault and the Python
 * exception class the reference raises.
 */
export type BuildResult =
  | { ok: true; value: MooncakeBlock; json: string }
  | { ok: false; error: string; path: string; kind: "ValueError" | "TypeError" };
"#;

/// Throws a `TypeError` saying how `function` was misused.
fn misuse(function: &str, what: &str) -> JsValue {
    js_sys::TypeError::new(&format!("{function}: {what}")).into()
}

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A JS value as the core's JSON model: JS numbers that are safe integers
/// become ints, others floats (JS cannot tell `2.0` from `2`; use
/// `validateJson` for that); a BigInt within 64 bits is an int; `null` and
/// `undefined` inside a value are `None`; arrays are lists and other
/// objects dicts of their own enumerable string keys, except iterables
/// (`Map`, `Set`, typed arrays), which are refused.
fn from_js(function: &str, value: &JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Err(misuse(function, "expected a JSON value, got undefined"));
    }
    to_value(value, 0).map_err(|what| misuse(function, what))
}

/// Refuses values nested deeper than the text parser accepts (which also
/// stops cycles): the core's checks are written for what `json::parse` can
/// produce.
fn to_value(value: &JsValue, depth: usize) -> Result<Value, &'static str> {
    // `null` or `undefined`.
    if value.loose_eq(&JsValue::NULL) {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(f) = value.as_f64() {
        return Ok(if f.fract() == 0.0 && f.abs() <= MAX_SAFE {
            Value::int(f as i64)
        } else {
            Value::Float(f)
        });
    }
    if let Some(s) = value.as_string() {
        return Ok(Value::from(s));
    }
    if value.is_bigint() {
        let text = value
            .unchecked_ref::<BigInt>()
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        // An i64, or a u64 (up to 18446744073709551615: 20 digits).
        return match Int::from_decimal(&text) {
            Some(Int::Small(i)) => Ok(Value::int(i)),
            Some(big)
                if !text.starts_with('-')
                    && (text.len(), text.as_str()) <= (20, "18446744073709551615") =>
            {
                Ok(Value::Int(big))
            }
            _ => Err("a BigInt beyond 64 bits (use validateJson for integers of any size)"),
        };
    }
    if !value.is_object() {
        return Err(if value.is_function() {
            "invalid type: function, expected a JSON value"
        } else {
            "invalid type: symbol, expected a JSON value"
        });
    }
    if depth >= MAX_DEPTH {
        return Err("value is nested too deeply (or is cyclic)");
    }
    if Array::is_array(value) {
        let mut items = Vec::new();
        for item in value.unchecked_ref::<Array>().iter() {
            items.push(to_value(&item, depth + 1)?);
        }
        return Ok(Value::List(items));
    }
    if Reflect::has(value, &Symbol::iterator()).unwrap_or(false) {
        return Err(
            "invalid type: an iterable object (a Map, a Set ...), expected an array or a plain object",
        );
    }
    let entries = Object::entries(value.unchecked_ref::<Object>());
    let mut pairs = Vec::new();
    for entry in entries.iter() {
        let entry = entry.unchecked_into::<Array>();
        let key = entry.get(0).as_string().unwrap_or_default();
        pairs.push((Value::from(key), to_value(&entry.get(1), depth + 1)?));
    }
    Ok(Value::Object(json::Object::from_pairs(pairs)))
}

/// A value as plain JS data: numbers, with integers beyond 2^53 as BigInts;
/// dicts as plain objects (keys that are not strings as `json.dumps`
/// writes them).
fn to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Int(Int::Small(i)) if (*i as f64).abs() <= MAX_SAFE => JsValue::from_f64(*i as f64),
        Value::Int(i) => {
            BigInt::new(&JsValue::from_str(&i.to_string())).map_or(JsValue::NULL, JsValue::from)
        }
        Value::Float(f) => JsValue::from_f64(*f),
        Value::Str(s) => JsValue::from_str(&s.to_string_lossy()),
        Value::List(items) => {
            let list = Array::new();
            for item in items {
                list.push(&to_js(item));
            }
            list.into()
        }
        Value::Object(o) => {
            let entries = Array::new();
            for (k, v) in o.iter() {
                let key = match k {
                    Value::Str(s) => s.to_string_lossy(),
                    other => other.to_json(),
                };
                entries.push(&Array::of2(&JsValue::from_str(&key), &to_js(v)));
            }
            // fromEntries, not assignment: a "__proto__" key stays a key.
            Object::from_entries(&entries).map_or(JsValue::NULL, JsValue::from)
        }
    }
}

/// A plain object with these properties, in this order.
fn record(fields: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (name, value) in fields {
        let _ = Reflect::set(&object, &JsValue::from_str(name), value);
    }
    object.into()
}

fn string_arg(function: &str, value: JsValue) -> Result<String, JsValue> {
    value
        .as_string()
        .ok_or_else(|| misuse(function, "expected a string"))
}

fn report_to_js(report: &Report) -> JsValue {
    let (errors, warnings) = (Array::new(), Array::new());
    for d in &report.diagnostics {
        let list = if d.is_error() { &errors } else { &warnings };
        list.push(&record(&[
            ("path", JsValue::from_str(&d.path)),
            ("message", JsValue::from_str(&d.message)),
        ]));
    }
    record(&[
        ("ok", JsValue::from_bool(errors.length() == 0)),
        ("errors", errors.into()),
        ("warnings", warnings.into()),
    ])
}

fn outcome_to_js<E: std::fmt::Display>(result: Result<String, E>) -> JsValue {
    match result {
        Ok(value) => record(&[("ok", JsValue::TRUE), ("value", JsValue::from_str(&value))]),
        Err(e) => record(&[
            ("ok", JsValue::FALSE),
            ("error", JsValue::from_str(&e.to_string())),
        ]),
    }
}

/// Checks a `mooncake` block given as a JS value, as GCO's
/// `validate_mooncake_spec` does, and lists every error and warning.
///
/// JS numbers are read as JSON numbers are by JS: a safe integer is an int,
/// anything else (`2.5`, `2 ** 53`) a float, and `2.0` is the int 2; a
/// BigInt is an int. For Python's reading of text (`2.0` a float, integers
/// exact at any size) use `validateJson`. The argument is the block itself
/// (`{ mode: "both", ... }`), not a spec holding one. Throws a `TypeError`
/// for `undefined`, functions, symbols, `Map`s and other iterables that are
/// not arrays, BigInts beyond 64 bits, and values nested deeper than 1000
/// levels or cyclic.
#[wasm_bindgen(unchecked_return_type = "ValidationResult")]
pub fn validate(
    #[wasm_bindgen(unchecked_param_type = "unknown")] block: JsValue,
) -> Result<JsValue, JsValue> {
    let value = from_js("validate", &block)?;
    Ok(report_to_js(&check_mooncake(&value)))
}

/// Checks a `mooncake` block given as JSON text, read as Python's `json`
/// reads it: integers exact at any size, `2.0` a float (`1e400` is `inf`),
/// the last of duplicate keys wins. Text that is not JSON is an error at path `""`, not
/// an exception; throws a `TypeError` only when `text` is not a string.
#[wasm_bindgen(js_name = validateJson, unchecked_return_type = "ValidationResult")]
pub fn validate_json(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsValue> {
    let text = string_arg("validateJson", text)?;
    let report = match json::parse(&text) {
        Ok(block) => check_mooncake(&block),
        Err(e) => {
            let mut report = Report::default();
            report.push(Diagnostic::error("", format!("invalid JSON: {e}")));
            report
        }
    };
    Ok(report_to_js(&report))
}

/// The reference's `author_byte_size`: the canonical decimal string of a
/// byte size given as an integer or a digit string. Any other value is
/// answered with the reference's message (`ok: false`); JS numbers are read
/// as in `validate` (use a BigInt or a digit string beyond 2^53).
#[wasm_bindgen(js_name = authorByteSize, unchecked_return_type = "Outcome<string>")]
pub fn author_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "number | bigint | string")] value: JsValue,
) -> Result<JsValue, JsValue> {
    let value = from_js("authorByteSize", &value)?;
    Ok(outcome_to_js(author_byte_size(ByteSizeArg::from(&value))))
}

/// Reads a human byte size (`4 GiB`, `1.5 GB`, `4294967296`) as the
/// canonical decimal string. Decimal units are powers of 1000, binary ones
/// (`KiB` ...) of 1024.
#[wasm_bindgen(js_name = parseByteSize, unchecked_return_type = "Outcome<string>")]
pub fn parse_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "string")] input: JsValue,
) -> Result<JsValue, JsValue> {
    let input = string_arg("parseByteSize", input)?;
    Ok(outcome_to_js(crate::parse_byte_size(&input)))
}

/// Formats a canonical byte count in the largest exact unit (`4 GiB`);
/// `null` when it is not a byte size.
#[wasm_bindgen(js_name = formatByteSize, unchecked_return_type = "string | null")]
pub fn format_byte_size_js(
    #[wasm_bindgen(unchecked_param_type = "string")] canonical: JsValue,
) -> Result<JsValue, JsValue> {
    let canonical = string_arg("formatByteSize", canonical)?;
    Ok(crate::format_byte_size(&canonical).map_or(JsValue::NULL, |s| JsValue::from_str(&s)))
}

const BUILD_OPTIONS: [&str; 8] = [
    "mode",
    "prefillReplicas",
    "decodeReplicas",
    "store",
    "transfer",
    "proxy",
    "autoscaling",
    "defaultProxyImage",
];

/// The reference's `_build_mooncake_block`: assembles a block from deploy
/// arguments (topology for split modes, the store enabled for store-bearing
/// ones, byte sizes authored, the proxy image defaulted) and validates it.
/// Throws a `TypeError` when `options` is not an object, lacks `mode`, or
/// has an option name not in `BuildOptions`; option values are read as in
/// `validate`.
#[wasm_bindgen(js_name = buildMooncakeBlock, unchecked_return_type = "BuildResult")]
pub fn build_mooncake_block_js(
    #[wasm_bindgen(unchecked_param_type = "BuildOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    const F: &str = "buildMooncakeBlock";
    if !options.is_object() || Array::is_array(&options) {
        return Err(misuse(F, "expected an options object"));
    }
    for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !BUILD_OPTIONS.contains(&key.as_str()) {
            return Err(misuse(
                F,
                &format!(
                    "unknown option \"{key}\"; expected one of {}",
                    BUILD_OPTIONS.join(", ")
                ),
            ));
        }
    }
    let option = |name: &str| -> Result<Option<Value>, JsValue> {
        let value = Reflect::get(&options, &JsValue::from_str(name))?;
        if value.is_undefined() {
            Ok(None)
        } else {
            from_js(F, &value).map(Some)
        }
    };
    let mode = option("mode")?.ok_or_else(|| misuse(F, "option \"mode\" is required"))?;
    let mut args = BuildArgs::new(mode);
    if let Some(n) = option("prefillReplicas")? {
        args.prefill_replicas = n;
    }
    if let Some(n) = option("decodeReplicas")? {
        args.decode_replicas = n;
    }
    args.store = option("store")?;
    args.transfer = option("transfer")?;
    args.proxy = option("proxy")?;
    args.autoscaling = option("autoscaling")?;
    args.default_proxy_image = option("defaultProxyImage")?;
    Ok(match build_mooncake_block(&args) {
        Ok(block) => record(&[
            ("ok", JsValue::TRUE),
            ("value", to_js(&block)),
            ("json", JsValue::from_str(&block.to_json())),
        ]),
        Err(e) => record(&[
            ("ok", JsValue::FALSE),
            ("error", JsValue::from_str(&e.message)),
            ("path", JsValue::from_str(&e.path)),
            ("kind", JsValue::from_str(e.kind.as_str())),
        ]),
    })
}

/// The package's allocator, in place of std's dlmalloc (about 3 KB of the
/// gzipped module, most of what the size budget lacked). Power-of-two size
/// classes from 16 bytes, each with a free list threaded through its free
/// blocks; new blocks are cut from pages taken with `memory.grow`, each
/// aligned to its size (to 64 KiB at most), so a block of a class serves any
/// alignment up to the class size. Blocks are never split or merged: a live
/// block wastes less than half of itself, and the memory a class once held
/// stays with it for reuse (wasm memory never shrinks anyway). The module is
/// single-threaded: it is built without the `atomics` feature.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
mod allocator {
    use std::alloc::{GlobalAlloc, Layout};
    use std::arch::wasm32;
    use std::cell::UnsafeCell;
    use std::ptr::null_mut;

    const PAGE: usize = 65536;
    const MIN_BLOCK: usize = 16;

    struct Heap {
        /// The first free block of each class (size `1 << class`); a free
        /// block's first word points to the next.
        free: [*mut u8; usize::BITS as usize],
        /// The untouched memory: from `next` to `end`.
        next: usize,
        end: usize,
    }

    struct Allocator(UnsafeCell<Heap>);

    // One thread: nothing is shared.
    unsafe impl Sync for Allocator {}

    #[global_allocator]
    static ALLOCATOR: Allocator = Allocator(UnsafeCell::new(Heap {
        free: [null_mut(); usize::BITS as usize],
        next: 0,
        end: 0,
    }));

    /// The block size for a layout, a power of two; `None` beyond 2 GiB.
    fn block_size(layout: Layout) -> Option<usize> {
        layout
            .size()
            .max(layout.align())
            .max(MIN_BLOCK)
            .checked_next_power_of_two()
    }

    unsafe impl GlobalAlloc for Allocator {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // Blocks are aligned to their size up to a page, no further.
            if layout.align() > PAGE {
                return null_mut();
            }
            let Some(size) = block_size(layout) else {
                return null_mut();
            };
            // SAFETY: one thread, and nothing here re-enters the allocator.
            let heap = unsafe { &mut *self.0.get() };
            let class = size.trailing_zeros() as usize;
            let head = heap.free[class];
            if !head.is_null() {
                // SAFETY: a free block of this class holds the next one.
                heap.free[class] = unsafe { *head.cast::<*mut u8>() };
                return head;
            }
            let align = size.min(PAGE);
            let mut start = (heap.next + align - 1) & !(align - 1);
            if heap.end.checked_sub(start).is_none_or(|room| room < size) {
                let pages = size.div_ceil(PAGE);
                let old = wasm32::memory_grow(0, pages);
                if old == usize::MAX {
                    return null_mut();
                }
                let base = old * PAGE;
                if base != heap.end {
                    // Not right after ours (the first time): start there.
                    heap.next = base;
                }
                heap.end = base + pages * PAGE;
                // `end` is page-aligned, so `start` stays within the old
                // memory and the new pages make room for the block.
                start = (heap.next + align - 1) & !(align - 1);
            }
            heap.next = start + size;
            start as *mut u8
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            let Some(size) = block_size(layout) else {
                return;
            };
            let class = size.trailing_zeros() as usize;
            // SAFETY: one thread; `ptr` is a block of this class, now free.
            unsafe {
                let heap = &mut *self.0.get();
                *ptr.cast::<*mut u8>() = heap.free[class];
                heap.free[class] = ptr;
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: the caller's promises for `realloc` (a valid layout).
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            if block_size(new_layout) == block_size(layout) {
                return ptr;
            }
            // SAFETY: as in `GlobalAlloc::realloc`'s default.
            unsafe {
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}
