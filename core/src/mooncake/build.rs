//! The reference's `_build_mooncake_block`: a block from deploy arguments.

use std::fmt;

use super::Mode;
use super::lint::BLOCK_KEYS;
use crate::bytesize::{ByteSizeArg, author_byte_size};
use crate::json::{Object, Value};
use crate::limits::{MOONCAKE_DEFAULT_INSTANCES, MOONCAKE_STORE_BYTE_SIZE_FIELDS, choices};

/// The builder's arguments as JSON values: the reference takes whatever the
/// caller passes, so this does too, and refuses it as the reference would.
#[derive(Debug, Clone)]
pub struct BuildArgs {
    pub mode: Value,
    pub prefill_replicas: Value,
    pub decode_replicas: Value,
    pub store: Option<Value>,
    pub transfer: Option<Value>,
    pub proxy: Option<Value>,
    pub autoscaling: Option<Value>,
    /// Split modes default `proxy.image` to this when it is truthy.
    pub default_proxy_image: Option<Value>,
}

impl BuildArgs {
    /// A mode with the reference's defaults (1p1d, nothing else).
    pub fn new(mode: impl Into<Value>) -> BuildArgs {
        BuildArgs {
            mode: mode.into(),
            prefill_replicas: Value::int(MOONCAKE_DEFAULT_INSTANCES),
            decode_replicas: Value::int(MOONCAKE_DEFAULT_INSTANCES),
            store: None,
            transfer: None,
            proxy: None,
            autoscaling: None,
            default_proxy_image: None,
        }
    }
}

/// Python's exception classes, as the reference raises them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    ValueError,
    TypeError,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ValueError => "ValueError",
            ErrorKind::TypeError => "TypeError",
        }
    }
}

/// Why a block could not be built: the reference's message and class, and
/// the path of the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    pub path: String,
    pub message: String,
    pub kind: ErrorKind,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

fn type_error(path: &str, message: String) -> BuildError {
    BuildError {
        path: path.to_owned(),
        message,
        kind: ErrorKind::TypeError,
    }
}

/// Python's `dict(value)` for a JSON value: a dict is taken as it is, a
/// list of pairs (two-item lists, two-character strings, two-key dicts)
/// becomes a dict, and anything else fails with Python's message and class.
pub fn py_dict(value: Value, path: &str) -> Result<Object, BuildError> {
    let elements: Vec<Value> = match value {
        Value::Object(o) => return Ok(o),
        Value::List(items) => items,
        Value::Str(s) => s
            .code_points()
            .map(|cp| Value::Str(one_code_point(cp)))
            .collect(),
        other => {
            return Err(type_error(
                path,
                format!("'{}' object is not iterable", other.type_name()),
            ));
        }
    };
    let mut pairs = Vec::with_capacity(elements.len());
    for (i, element) in elements.into_iter().enumerate() {
        let pair: Vec<Value> = match element {
            Value::List(items) => items,
            Value::Str(s) => s
                .code_points()
                .map(|cp| Value::Str(one_code_point(cp)))
                .collect(),
            Value::Object(o) => o.iter().map(|(k, _)| k.clone()).collect(),
            _ => {
                return Err(type_error(
                    path,
                    format!("cannot convert dictionary update sequence element #{i} to a sequence"),
                ));
            }
        };
        if pair.len() != 2 {
            return Err(BuildError {
                path: path.to_owned(),
                message: format!(
                    "dictionary update sequence element #{i} has length {}; 2 is required",
                    pair.len()
                ),
                kind: ErrorKind::ValueError,
            });
        }
        let mut pair = pair.into_iter();
        let (key, val) = (
            pair.next().expect("two items"),
            pair.next().expect("two items"),
        );
        if matches!(key, Value::List(_) | Value::Object(_)) {
            return Err(type_error(
                path,
                format!("unhashable type: '{}'", key.type_name()),
            ));
        }
        pairs.push((key, val));
    }
    Ok(Object::from_pairs(pairs))
}

fn one_code_point(cp: u32) -> crate::json::PyStr {
    let mut bytes = Vec::with_capacity(4);
    crate::json::pystr_push(&mut bytes, cp);
    crate::json::PyStr::from_wtf8(bytes)
}

/// Assembles a block as the reference does (topology for split modes, store
/// enabled by default for store-bearing modes, byte sizes authored, proxy
/// image defaulted for split modes), then validates it: the reference's
/// `_build_mooncake_block`, with its first error.
pub fn build_mooncake_block(args: &BuildArgs) -> Result<Value, BuildError> {
    let block = author_mooncake_block(args)?;
    super::validate_mooncake(&block).map_err(|d| BuildError {
        path: d.path,
        message: d.message,
        kind: ErrorKind::ValueError,
    })?;
    Ok(block)
}

/// The block [`build_mooncake_block`] validates, with the errors it raises
/// before validating (`dict()` of a non-mapping, a byte size that does not
/// author), in its order.
pub fn author_mooncake_block(args: &BuildArgs) -> Result<Value, BuildError> {
    assemble_mooncake_block(args.clone()).authored()
}

/// A block assembled in one pass, as far as `dict()` allows.
#[derive(Debug)]
pub struct Assembled {
    /// The block, with byte sizes that do not author left as given; an
    /// error only where no block can be made (`dict()` of a non-mapping).
    pub block: Result<Value, BuildError>,
    /// The first byte size that does not author: the reference raises it
    /// where it meets it, before any later `dict()` error.
    pub authoring_error: Option<BuildError>,
}

impl Assembled {
    /// The reference's outcome: the block, or the first error it raises.
    pub fn authored(self) -> Result<Value, BuildError> {
        match self.authoring_error {
            Some(e) => Err(e),
            None => self.block,
        }
    }
}

/// Assembles the block [`build_mooncake_block`] would validate, without
/// validating it, taking the arguments' values rather than copying them.
pub fn assemble_mooncake_block(args: BuildArgs) -> Assembled {
    let mut authoring_error = None;
    let block = assemble(args, &mut authoring_error);
    Assembled {
        block,
        authoring_error,
    }
}

fn assemble(
    args: BuildArgs,
    authoring_error: &mut Option<BuildError>,
) -> Result<Value, BuildError> {
    // The reference's `mode in {...}` raises TypeError for a list or dict; the
    // port answers with the message any other wrong mode gets.
    if matches!(args.mode, Value::List(_) | Value::Object(_)) {
        return Err(BuildError {
            path: "mooncake.mode".into(),
            message: format!(
                "mooncake.mode must be one of {}, got {}",
                choices(Mode::NAMES),
                args.mode.repr()
            ),
            kind: ErrorKind::ValueError,
        });
    }
    let mode = Mode::of(&args.mode);
    // Keys in the reference's order, each once: appended without a search.
    let mut block = Object::with_capacity(BLOCK_KEYS.len());
    block.push_new(Value::str("mode"), args.mode);

    if mode.is_some_and(Mode::is_split) {
        let mut topology = Object::with_capacity(2);
        topology.push_new(Value::str("prefill"), args.prefill_replicas);
        topology.push_new(Value::str("decode"), args.decode_replicas);
        block.push_new(Value::str("topology"), Value::Object(topology));
    }

    let mut store = non_null(args.store)
        .map(|v| py_dict(v, "mooncake.store"))
        .transpose()?;
    if mode.is_some_and(Mode::has_store) {
        store
            .get_or_insert_with(Object::new)
            .set_default("enabled", true);
    }
    if let Some(mut store) = store {
        for field in MOONCAKE_STORE_BYTE_SIZE_FIELDS {
            let Some(value) = store.get(field) else {
                continue;
            };
            match author_byte_size(ByteSizeArg::from(value)) {
                Ok(authored) => store.insert(field, authored),
                Err(e) => {
                    authoring_error.get_or_insert_with(|| BuildError {
                        path: format!("mooncake.store.{field}"),
                        message: format!("mooncake.store.{field}: {e}"),
                        kind: ErrorKind::ValueError,
                    });
                }
            }
        }
        block.push_new(Value::str("store"), Value::Object(store));
    }

    if let Some(transfer) = non_null(args.transfer) {
        let transfer = py_dict(transfer, "mooncake.transfer")?;
        block.push_new(Value::str("transfer"), Value::Object(transfer));
    }

    let mut proxy = non_null(args.proxy)
        .map(|v| py_dict(v, "mooncake.proxy"))
        .transpose()?;
    if let Some(image) = non_null(args.default_proxy_image).filter(|v| v.is_truthy())
        && mode.is_some_and(Mode::is_split)
    {
        proxy
            .get_or_insert_with(Object::new)
            .set_default("image", image);
    }
    if let Some(proxy) = proxy {
        block.push_new(Value::str("proxy"), Value::Object(proxy));
    }

    if let Some(autoscaling) = non_null(args.autoscaling) {
        let autoscaling = py_dict(autoscaling, "mooncake.autoscaling")?;
        block.push_new(Value::str("autoscaling"), Value::Object(autoscaling));
    }

    Ok(Value::Object(block))
}

fn non_null(v: Option<Value>) -> Option<Value> {
    v.filter(|v| !v.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn dict(text: &str) -> Result<String, String> {
        py_dict(parse(text).unwrap(), "x")
            .map(|o| Value::Object(o).repr())
            .map_err(|e| e.message)
    }

    #[test]
    fn dict_conversions_follow_python() {
        assert_eq!(dict(r#"{"a": 1}"#), Ok("{'a': 1}".into()));
        assert_eq!(
            dict(r#"[["a", 1], "bc", {"d": 0, "e": 0}]"#),
            Ok("{'a': 1, 'b': 'c', 'd': 'e'}".into())
        );
        assert_eq!(dict(r#""""#), Ok("{}".into()));
        assert_eq!(
            dict(r#""ab""#),
            Err("dictionary update sequence element #0 has length 1; 2 is required".into())
        );
        assert_eq!(
            dict("[[1, 2, 3]]"),
            Err("dictionary update sequence element #0 has length 3; 2 is required".into())
        );
        assert_eq!(
            dict("[1]"),
            Err("cannot convert dictionary update sequence element #0 to a sequence".into())
        );
        assert_eq!(dict("[[[], 1]]"), Err("unhashable type: 'list'".into()));
        assert_eq!(dict("5"), Err("'int' object is not iterable".into()));
        assert_eq!(dict("true"), Err("'bool' object is not iterable".into()));
        assert_eq!(dict("[[1, \"a\"], [true, \"b\"]]"), Ok("{1: 'b'}".into()));
    }

    #[test]
    fn builds_with_the_reference_defaults() {
        let mut args = BuildArgs::new("both");
        args.prefill_replicas = Value::int(2);
        args.decode_replicas = Value::int(4);
        args.store = Some(parse(r#"{"global_segment_size": " 4294967296 "}"#).unwrap());
        args.default_proxy_image = Some(Value::str("img:1"));
        let block = build_mooncake_block(&args).unwrap();
        assert_eq!(
            block.to_json(),
            r#"{"mode": "both", "topology": {"prefill": 2, "decode": 4}, "store": {"global_segment_size": "4294967296", "enabled": true}, "proxy": {"image": "img:1"}}"#
        );
    }

    #[test]
    fn byte_sizes_fail_before_the_mode() {
        let mut args = BuildArgs::new("bogus");
        args.store = Some(parse(r#"{"local_buffer_size": -1}"#).unwrap());
        let e = build_mooncake_block(&args).unwrap_err();
        assert_eq!(
            e.message,
            "mooncake.store.local_buffer_size: byte-size value out of range [0, 9223372036854775807]: -1"
        );
    }
}
