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
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(JsonSchema))]
        pub struct $name {
            $($body)*
            /// Keys this version does not know, kept as they are.
            #[serde(flatten)]
            pub extra: Object,
        }
    };
}

typed! {
    /// An XpYd topology: X prefill and Y decode instances, each 1 to 1000.
    pub struct MooncakeTopology {
        #[cfg_attr(feature = "schema", schemars(range(min = MOONCAKE_TOPOLOGY_MIN, max = MOONCAKE_TOPOLOGY_MAX)))]
        pub prefill: i64,
        #[cfg_attr(feature = "schema", schemars(range(min = MOONCAKE_TOPOLOGY_MIN, max = MOONCAKE_TOPOLOGY_MAX)))]
        pub decode: i64,
    }
}

typed! {
    /// The KV-cache store pool. Byte sizes are base-10 digit strings.
    pub struct MooncakeStoreConfig {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub enabled: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata_server: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub master_server_address: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub protocol: Option<TransferProtocol>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub device_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^\s*[0-9]+\s*$")))]
        pub global_segment_size: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^\s*[0-9]+\s*$")))]
        pub local_buffer_size: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub offload: Option<OffloadTier>,
        /// Needs `enabled: true`: the cold tier extends the hot store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cold_tier_enabled: Option<bool>,
    }
}

typed! {
    /// The transfer engine that moves KV cache between instances.
    pub struct MooncakeTransferConfig {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub protocol: Option<TransferProtocol>,
        /// Empty: Mooncake detects the interface.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub device_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub num_workers: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub bootstrap_base_port: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub abort_request_timeout: Option<i64>,
    }
}

typed! {
    /// The PD proxy in front of a split topology.
    pub struct MooncakeProxyConfig {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub image: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub scheduling: Option<String>,
        /// Name of the Kubernetes Secret holding the proxy admin key; the key
        /// itself never appears in a spec.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub admin_api_key_secret: Option<String>,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metrics: Option<Vec<Object>>,
    }
}

typed! {
    /// Per-role autoscaling; only split modes may enable it.
    pub struct MooncakeAutoscalingConfig {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub enabled: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub prefill: Option<MooncakeRoleAutoscaling>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub decode: Option<MooncakeRoleAutoscaling>,
    }
}

typed! {
    /// The optional `mooncake` block of a spec.
    pub struct MooncakeSpec {
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
        pub image: String,
        #[cfg_attr(feature = "schema", schemars(range(min = PORT_MIN, max = PORT_MAX)))]
        pub port: i64,
        #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
        pub replicas: i64,
        #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
        pub gpu_count: i64,
        pub health_check_path: String,
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub env: Option<std::collections::BTreeMap<String, String>>,
        /// The classic (non-mooncake) autoscaling block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub autoscaling: Option<Object>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub capacity_type: Option<CapacityType>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub args: Option<Vec<String>>,
        /// Left out when `nvidia`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub accelerator: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub node_selector: Option<std::collections::BTreeMap<String, String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mooncake: Option<MooncakeSpec>,
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

/// The JSON Schema of [`EndpointSpec`], pretty-printed with a final newline:
/// the text committed as `core/schema/endpoint-spec.schema.json`.
#[cfg(feature = "schema")]
pub fn endpoint_spec_schema() -> String {
    let schema = schemars::schema_for!(EndpointSpec);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}
