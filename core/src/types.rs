//! Typed views of the spec, the deploy request and the `mooncake` block, for
//! editors, generated documentation (the JSON Schema) and typed callers.
//!
//! They describe the documented shape (the reference's TypedDicts). The
//! rules themselves run on [`Value`](crate::json::Value), which holds any
//! JSON exactly, because the reference accepts blocks these types would not
//! (a `store.enabled` of `1`, say). Every struct keeps unknown keys in
//! `extra`, so a round trip through a type loses nothing.

use serde::{Deserialize, Serialize};

pub use crate::framework::Framework;
use crate::json::{Object, Value};
pub use crate::mooncake::{Mode as MooncakeMode, OffloadTier, TransferProtocol};
pub use crate::spec::CapacityType;

#[cfg(feature = "schema")]
use crate::limits::{MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN, PORT_MAX, PORT_MIN};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

macro_rules! typed {
    // With `openapi`, also its OpenAPI schema: a body of the console's API.
    (openapi; $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        typed!(@ [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]]
            [#[cfg_attr(feature = "openapi", schema(ignore))]]
            $(#[$meta])* pub struct $name { $($body)* });
    };
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        typed!(@ [] [] $(#[$meta])* pub struct $name { $($body)* });
    };
    (@ [$($openapi:tt)*] [$($openapi_skip:tt)*]
        $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(JsonSchema))]
        $($openapi)*
        // The checks warn of any other member, so the schema refuses it.
        #[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
        pub struct $name {
            $($body)*
            /// Keys this version does not know, kept as they are.
            #[serde(flatten)]
            #[cfg_attr(feature = "schema", schemars(skip))]
            $($openapi_skip)*
            pub extra: Object,
        }
    };
}

typed! {
    /// An XpYd topology: X prefill and Y decode instances, each 1 to 1000.
    pub struct MooncakeTopology {
        /// Prefill instances, 1 to 1000.
        #[cfg_attr(feature = "schema", schemars(range(min = MOONCAKE_TOPOLOGY_MIN, max = MOONCAKE_TOPOLOGY_MAX)))]
        pub prefill: i64,
        /// Decode instances, 1 to 1000.
        #[cfg_attr(feature = "schema", schemars(range(min = MOONCAKE_TOPOLOGY_MIN, max = MOONCAKE_TOPOLOGY_MAX)))]
        pub decode: i64,
    }
}

typed! {
    openapi;
    /// The KV-cache store pool. Byte sizes are whole numbers of bytes, as
    /// integers or decimal digits (stored as digits).
    pub struct MooncakeStoreConfig {
        /// Runs the shared KV-cache store; the `store` and `both` modes set it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub enabled: Option<bool>,
        /// The store's metadata server; GCO's monitor refuses an address
        /// outside each target region.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata_server: Option<String>,
        /// The `mooncake-master` address; GCO's monitor refuses an address
        /// outside each target region.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub master_server_address: Option<String>,
        /// Not read by GCO's newest monitor: `mooncake.json` takes the
        /// protocol from `transfer.protocol`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub protocol: Option<TransferProtocol>,
        /// Not read by GCO's newest monitor: `mooncake.json` takes the
        /// device from `transfer.device_name`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub device_name: Option<String>,
        /// Bytes each instance gives the store, 0 to 2**63-1 (0: the store
        /// caches nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(schema_with = "byte_size"))]
        #[cfg_attr(feature = "openapi", schema(schema_with = authored_byte_size, required = false))]
        pub global_segment_size: Option<String>,
        /// Each instance's local buffer in bytes, 0 to 2**63-1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(schema_with = "byte_size"))]
        #[cfg_attr(feature = "openapi", schema(schema_with = authored_byte_size, required = false))]
        pub local_buffer_size: Option<String>,
        /// Where the store offloads KV blocks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub offload: Option<OffloadTier>,
        /// Needs `enabled: true`: the cold tier extends the hot store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cold_tier_enabled: Option<bool>,
        /// The image of the region's shared `mooncake-master`; wins over
        /// the monitor's `MOONCAKE_MASTER_IMAGE`. A target region whose
        /// monitor has neither cannot run the shared master.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub master_image: Option<String>,
    }
}

typed! {
    /// The transfer engine that moves KV cache between instances.
    pub struct MooncakeTransferConfig {
        /// How KV blocks move: `rdma` (over EFA) or `tcp`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub protocol: Option<TransferProtocol>,
        /// Empty: Mooncake detects the interface.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub device_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub num_workers: Option<i64>,
        /// The first port of the KV bootstrap window.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub bootstrap_base_port: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub abort_request_timeout: Option<i64>,
        /// The transfer engine's peers; GCO's monitor refuses an address
        /// outside each target region.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub peer_addresses: Option<Vec<String>>,
    }
}

typed! {
    /// The PD proxy in front of a split topology.
    pub struct MooncakeProxyConfig {
        /// The PD proxy's image; split modes default it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub image: Option<String>,
        /// How the proxy picks instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(schema_with = "proxy_scheduling"))]
        pub scheduling: Option<String>,
        /// Name of the Kubernetes Secret holding the proxy admin key; the key
        /// itself never appears in a spec.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub admin_api_key_secret: Option<String>,
        /// PD proxy instances.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i64>,
    }
}

typed! {
    /// One role's autoscaling bounds and metrics.
    pub struct MooncakeRoleAutoscaling {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
        pub min_replicas: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_replicas: Option<i64>,
        /// What the role scales on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metrics: Option<Vec<Object>>,
    }
}

typed! {
    /// Per-role autoscaling; only split modes may enable it.
    pub struct MooncakeAutoscalingConfig {
        /// The roles' bounds are ignored unless this is `true`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub enabled: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prefill: Option<MooncakeRoleAutoscaling>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub decode: Option<MooncakeRoleAutoscaling>,
    }
}

typed! {
    /// The optional `mooncake` block of a spec: disaggregated prefill/decode
    /// serving (an XpYd topology) and a shared KV-cache store.
    pub struct MooncakeSpec {
        /// `disaggregated` splits prefill and decode; `store` runs a single
        /// KV-store instance; `both` composes the two.
        pub mode: MooncakeMode,
        /// Required for `disaggregated` and `both`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub topology: Option<MooncakeTopology>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub store: Option<MooncakeStoreConfig>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub transfer: Option<MooncakeTransferConfig>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub proxy: Option<MooncakeProxyConfig>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub autoscaling: Option<MooncakeAutoscalingConfig>,
    }
}

typed! {
    /// An endpoint spec: what `deploy` stores under `spec`.
    pub struct EndpointSpec {
        /// The model server's container image.
        pub image: String,
        /// The model server's port (8443 is the TLS sidecar's).
        #[cfg_attr(feature = "schema", schemars(range(min = PORT_MIN, max = PORT_MAX)))]
        pub port: i64,
        /// Instances of a classic (non-Mooncake) endpoint.
        #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
        pub replicas: i64,
        /// GPUs per instance.
        #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
        pub gpu_count: i64,
        /// The health check's HTTP path, starting with `/`.
        pub health_check_path: String,
        /// The serving framework; which ones the team's GCO accepts is a
        /// setting (`--frameworks`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub framework: Option<Framework>,
        /// Region -> image URI, when an ECR image is rewritten per region.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub region_image_uris: Option<std::collections::BTreeMap<String, String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub gpu_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub model_path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub model_source: Option<String>,
        /// The model container's environment; names match
        /// `[A-Za-z_][A-Za-z0-9_]*`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub env: Option<std::collections::BTreeMap<String, String>>,
        /// The classic (non-mooncake) autoscaling block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub autoscaling: Option<Object>,
        /// The nodes' capacity type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub capacity_type: Option<CapacityType>,
        /// The model server's extra arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub args: Option<Vec<String>>,
        /// Left out when `nvidia`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub accelerator: Option<String>,
        /// Node labels the pods are scheduled on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub node_selector: Option<std::collections::BTreeMap<String, String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mooncake: Option<MooncakeSpec>,
        /// Set up by a canary deploy; GCO refuses it beside `mooncake`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "Option<crate::status::CanarySpec>"))]
        pub canary: Option<Object>,
    }
}

/// The typed views are `Default`, so an empty block's mode is the one
/// this view has always defaulted to; the rules know no default mode.
impl Default for MooncakeMode {
    fn default() -> MooncakeMode {
        MooncakeMode::Disaggregated
    }
}

/// Reads a typed view from a value. Fails where the value is outside the
/// documented shape (which the reference may still accept).
pub fn from_value<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    T::deserialize(v).map_err(|e| e.to_string())
}

#[cfg(feature = "schema")]
mod schema_impls {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

    use crate::json::{Object, Value};

    impl JsonSchema for Value {
        fn schema_name() -> Cow<'static, str> {
            "AnyValue".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!(true)
        }
    }

    impl JsonSchema for Object {
        fn schema_name() -> Cow<'static, str> {
            "Object".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({"type": "object"})
        }
    }
}

/// A byte size as the checks take it: a whole number of bytes, as an
/// integer or as decimal digits (Python's `strip()` around them allowed).
#[cfg(feature = "schema")]
fn byte_size(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "integer", "minimum": crate::limits::MOONCAKE_BYTE_SIZE_MIN},
            {"type": "string", "pattern": r"^\s*[0-9]+\s*$"}
        ]
    })
}

/// A byte size as the API takes it: a number of bytes, or a text with a
/// unit (`"4gb"`, `"2 GiB"`), which the console stores as digits.
#[cfg(feature = "openapi")]
fn authored_byte_size() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Integer]))
        .description(Some(
            "A number of bytes, or a text with a unit (\"4gb\", \"2 GiB\"), stored as digits.",
        ))
        .build()
}

/// The proxy's scheduling policies GCO's monitor understands.
#[cfg(feature = "schema")]
fn proxy_scheduling(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": crate::limits::MOONCAKE_PROXY_SCHEDULING,
    })
}
