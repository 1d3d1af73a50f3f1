//! The deploy request: one field per parameter of GCO's `deploy()`, each the
//! JSON the client sent. Values stay the core's [`Value`] rather than typed
//! Rust, so that a rule can name what was sent as the reference does (a
//! `None` count, a `'3'` string, an integer beyond 64 bits).

use crate::json::{Object, Value};

/// Declares [`DeployRequest`] from one list of its fields: the struct, its
/// keys and the lookup from a key to its field cannot disagree.
macro_rules! deploy_request {
    ($($(#[$attribute:meta])* $field:ident,)*) => {
        /// The parameters of GCO's `deploy()`. A member that is none of them
        /// gets a warning and is otherwise ignored.
        //
        // Each field is the member as given, `None` when absent; a given
        // `null` stays `Some(Value::Null)`, which some rules refuse.
        //
        // With `schema`, its JSON Schema (`core/schema/`): each field's
        // `schemars(with)` type is what `deploy()` takes there.
        #[derive(Debug, Clone, Default, PartialEq)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
        pub struct DeployRequest {
            $($(#[$attribute])* pub $field: Option<Value>,)*
            /// Members that are no parameter of `deploy()`, in their order:
            /// each gets a warning, and is otherwise ignored.
            #[cfg_attr(feature = "openapi", schema(ignore))]
            #[cfg_attr(feature = "schema", schemars(skip))]
            pub unknown: Vec<(Value, Value)>,
        }

        impl DeployRequest {
            /// Every field's key, in `deploy()`'s parameter order.
            pub const KEYS: &[&str] = &[$(stringify!($field)),*];

            // A search of `KEYS`, not a `match` on the texts: the npm
            // package is smaller so.
            pub(super) fn field_mut(&mut self, key: &str) -> Option<&mut Option<Value>> {
                let at = Self::KEYS.iter().position(|known| *known == key)?;
                [$(&mut self.$field),*].into_iter().nth(at)
            }
        }
    };
}

deploy_request! {
    /// The endpoint's name: a DNS label GCO routes as `/inference/<name>`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    endpoint_name,
    /// The model server's container image. Required unless `mooncake_mode`
    /// is given (which brings a default).
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    image,
    /// Default: every region with GCO infrastructure.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<String>>"))]
    target_regions,
    /// Instances of a classic (non-Mooncake) endpoint.
    #[cfg_attr(feature = "openapi", schema(value_type = i64, required = false,
        default = json!(crate::limits::DEFAULT_REPLICAS)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>", range(min = 0),
        extend("default" = crate::limits::DEFAULT_REPLICAS)))]
    replicas,
    /// GPUs per instance.
    #[cfg_attr(feature = "openapi", schema(value_type = i64, required = false,
        default = json!(crate::limits::DEFAULT_GPU_COUNT)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>", range(min = 0),
        extend("default" = crate::limits::DEFAULT_GPU_COUNT)))]
    gpu_count,
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    gpu_type,
    /// The model server's port (8443 is the TLS sidecar's).
    #[cfg_attr(feature = "openapi", schema(value_type = i64, required = false,
        default = json!(crate::limits::DEFAULT_PORT)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>",
        range(min = crate::limits::PORT_MIN, max = crate::limits::PORT_MAX),
        extend("default" = crate::limits::DEFAULT_PORT)))]
    port,
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    model_path,
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    model_source,
    /// The health check's HTTP path, starting with `/`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false,
        default = json!(crate::limits::DEFAULT_HEALTH_CHECK_PATH)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>",
        extend("default" = crate::limits::DEFAULT_HEALTH_CHECK_PATH)))]
    health_check_path,
    /// The model container's environment; names match
    /// `[A-Za-z_][A-Za-z0-9_]*`.
    #[cfg_attr(feature = "openapi", schema(
        value_type = std::collections::BTreeMap<String, String>, required = false))]
    #[cfg_attr(feature = "schema", schemars(
        with = "Option<std::collections::BTreeMap<String, String>>"))]
    env,
    /// The Kubernetes namespace.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false,
        default = json!(crate::limits::DEFAULT_NAMESPACE)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>",
        extend("default" = crate::limits::DEFAULT_NAMESPACE)))]
    namespace,
    /// The endpoint's labels, as Kubernetes takes label keys and values.
    #[cfg_attr(feature = "openapi", schema(
        value_type = std::collections::BTreeMap<String, String>, required = false))]
    #[cfg_attr(feature = "schema", schemars(
        with = "Option<std::collections::BTreeMap<String, String>>"))]
    labels,
    /// The classic (non-Mooncake) autoscaling block.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Object>"))]
    autoscaling,
    /// The nodes' capacity type.
    #[cfg_attr(feature = "openapi", schema(schema_with = schema::capacity_types, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::spec::CapacityType>"))]
    capacity_type,
    /// The model server's extra arguments (the spec's `args`).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<String>>"))]
    extra_args,
    /// Left out of the spec when `nvidia`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = false,
        default = json!(crate::limits::DEFAULT_ACCELERATOR)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>",
        extend("default" = crate::limits::DEFAULT_ACCELERATOR)))]
    accelerator,
    /// Node labels the pods are scheduled on.
    #[cfg_attr(feature = "openapi", schema(
        value_type = std::collections::BTreeMap<String, String>, required = false))]
    #[cfg_attr(feature = "schema", schemars(
        with = "Option<std::collections::BTreeMap<String, String>>"))]
    node_selector,
    /// Whether to point the image at each region's ECR mirror.
    #[cfg_attr(feature = "openapi", schema(value_type = bool, required = false,
        default = true))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<bool>", extend("default" = true)))]
    rewrite_image,
    /// The serving framework. Which of these the team's GCO accepts is the
    /// console's `--frameworks`, in `GET /api/config`.
    #[cfg_attr(feature = "openapi", schema(schema_with = schema::frameworks, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::Framework>"))]
    framework,
    /// Builds the `mooncake` block from this and the fields below.
    #[cfg_attr(feature = "openapi", schema(schema_with = schema::mooncake_modes, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::Mode>"))]
    mooncake_mode,
    /// Prefill instances of a split topology, 1 to 1000.
    #[cfg_attr(feature = "openapi", schema(value_type = i64, required = false,
        default = json!(crate::limits::MOONCAKE_DEFAULT_INSTANCES)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>",
        range(min = crate::limits::MOONCAKE_TOPOLOGY_MIN, max = crate::limits::MOONCAKE_TOPOLOGY_MAX),
        extend("default" = crate::limits::MOONCAKE_DEFAULT_INSTANCES)))]
    prefill_replicas,
    /// Decode instances of a split topology, 1 to 1000.
    #[cfg_attr(feature = "openapi", schema(value_type = i64, required = false,
        default = json!(crate::limits::MOONCAKE_DEFAULT_INSTANCES)))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>",
        range(min = crate::limits::MOONCAKE_TOPOLOGY_MIN, max = crate::limits::MOONCAKE_TOPOLOGY_MAX),
        extend("default" = crate::limits::MOONCAKE_DEFAULT_INSTANCES)))]
    decode_replicas,
    /// The block's `store`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::types::MooncakeStoreConfig>"))]
    mooncake_store,
    /// The block's `transfer`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::types::MooncakeTransferConfig>"))]
    mooncake_transfer,
    /// The block's `proxy`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::types::MooncakeProxyConfig>"))]
    mooncake_proxy,
    /// The block's `autoscaling`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(
        with = "Option<crate::types::MooncakeAutoscalingConfig>"))]
    mooncake_autoscaling,
    /// The `mooncake` block itself, as a spec carries it (ignored when
    /// `mooncake_mode` is given).
    #[cfg_attr(feature = "openapi", schema(value_type = Object, required = false))]
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::types::MooncakeSpec>"))]
    mooncake,
}

impl DeployRequest {
    /// A request's members, each known key into its field and the rest into
    /// `unknown`. A key given twice keeps its last value, as a Python dict
    /// built from the JSON does.
    pub fn from_object(object: Object) -> DeployRequest {
        let mut request = DeployRequest::default();
        for (key, value) in object.into_entries() {
            let field = match &key {
                Value::Str(text) => text.as_str().and_then(|k| request.field_mut(k)),
                _ => None,
            };
            match field {
                Some(field) => *field = Some(value),
                None => request.unknown.push((key, value)),
            }
        }
        request
    }
}

/// `key`, which must be one of [`DeployRequest::KEYS`] (for `const`
/// contexts: a misspelt key fails the build).
pub(super) const fn checked_key(key: &'static str) -> &'static str {
    let mut i = 0;
    while i < DeployRequest::KEYS.len() {
        if str_eq(DeployRequest::KEYS[i], key) {
            return key;
        }
        i += 1;
    }
    panic!("not a deploy request field")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A field's value as `deploy()`'s defaults read it: `None` when absent or
/// null.
pub(super) fn non_null(field: Option<Value>) -> Option<Value> {
    field.filter(|v| !v.is_null())
}

#[cfg(feature = "openapi")]
mod schema {
    use utoipa::openapi::schema::{ObjectBuilder, Type};

    fn one_of(values: impl IntoIterator<Item = &'static str>) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values))
    }

    pub fn capacity_types() -> ObjectBuilder {
        one_of(crate::spec::CAPACITY_TYPES)
    }

    /// Every framework some GCO release accepts.
    pub fn frameworks() -> ObjectBuilder {
        one_of(crate::Framework::ALL.map(crate::Framework::as_str))
    }

    pub fn mooncake_modes() -> ObjectBuilder {
        one_of(crate::Mode::ALL.map(crate::Mode::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn request(text: &str) -> DeployRequest {
        match parse(text).unwrap() {
            Value::Object(o) => DeployRequest::from_object(o),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn members_go_to_their_fields_and_the_rest_stays_in_order() {
        let r = request(r#"{"port": 80, "zz": 1, "replicas": null, "aa": 2}"#);
        assert_eq!(r.port, Some(Value::int(80)));
        assert_eq!(r.replicas, Some(Value::Null));
        assert_eq!(non_null(r.replicas.clone()), None);
        assert_eq!(r.image, None);
        let unknown: Vec<String> = r.unknown.iter().map(|(k, _)| k.to_json()).collect();
        assert_eq!(unknown, [r#""zz""#, r#""aa""#]);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let r = request(r#"{"port": 80, "port": 81}"#);
        assert_eq!(r.port, Some(Value::int(81)));
    }

    #[test]
    fn every_key_is_a_field() {
        let mut r = DeployRequest::default();
        for key in DeployRequest::KEYS {
            assert!(r.field_mut(key).is_some(), "{key}");
        }
        assert_eq!(DeployRequest::KEYS.len(), 28);
    }
}
