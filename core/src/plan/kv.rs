//! The two texts a mooncake endpoint's pods are configured with: vLLM's
//! `--kv-transfer-config` per role and the shared `mooncake.json`, both as
//! Python's `json.dumps` prints them (GCO_FACTS section 4).

use crate::json::{Object, Value};
use crate::limits::{
    MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE, MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE,
    MOONCAKE_DEFAULT_TRANSFER_PROTOCOL, MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME,
    MOONCAKE_MASTER_RPC_PORT, MOONCAKE_PROTOCOL_RDMA,
};
use crate::mooncake::{Mode, Role};

/// The parts of a valid `mooncake` block the monitor reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block<'a> {
    pub mode: Mode,
    pub block: &'a Object,
}

impl<'a> Block<'a> {
    fn section(&self, key: &str) -> Option<&'a Object> {
        self.block.get(key)?.as_object()
    }

    fn text(&self, section: &str, key: &str) -> Option<&'a str> {
        self.section(section)?.get(key)?.as_str()
    }

    /// `transfer.protocol`, `rdma` when absent.
    pub fn transfer_protocol(&self) -> &'a str {
        self.text("transfer", "protocol")
            .unwrap_or(MOONCAKE_DEFAULT_TRANSFER_PROTOCOL)
    }

    /// `transfer.device_name`; empty asks Mooncake to pick the interface.
    pub fn transfer_device(&self) -> &'a str {
        self.text("transfer", "device_name").unwrap_or("")
    }

    /// The monitor renders the store only when `store.enabled` is exactly true.
    pub fn store_enabled(&self) -> bool {
        self.section("store")
            .and_then(|s| s.get("enabled"))
            .is_some_and(Value::is_true)
    }

    fn cold_tier_enabled(&self) -> bool {
        self.section("store")
            .and_then(|s| s.get("cold_tier_enabled"))
            .is_some_and(Value::is_true)
    }

    /// An enabled store's own transfer settings win over the block's
    /// `transfer` ones, since the store runs its own transfer engine.
    fn store_text(&self, key: &str) -> Option<&'a str> {
        self.store_enabled()
            .then(|| self.text("store", key))
            .flatten()
    }

    /// The shared `mooncake-master` serves the store's metadata and the
    /// RDMA transfer engine's handshake, so those need it.
    pub fn needs_master(&self) -> bool {
        self.mode.has_store()
            || self.transfer_protocol() == MOONCAKE_PROTOCOL_RDMA
            || self.store_protocol() == MOONCAKE_PROTOCOL_RDMA
    }

    /// The protocol `mooncake.json` carries.
    pub fn store_protocol(&self) -> &'a str {
        self.store_text("protocol")
            .unwrap_or_else(|| self.transfer_protocol())
    }

    /// Whether a role's pods move KV blocks over EFA and so run on EFA nodes.
    pub fn role_uses_rdma(&self, role: Option<Role>) -> bool {
        // Every pod loads mooncake.json; split roles also run the transfer.
        self.store_protocol() == MOONCAKE_PROTOCOL_RDMA
            || (role.is_some() && self.transfer_protocol() == MOONCAKE_PROTOCOL_RDMA)
    }

    /// The `--kv-transfer-config` of a role (`None`: the single store
    /// instance of `store` mode).
    pub fn kv_transfer_config(&self, role: Option<Role>) -> String {
        let kv_role = match role {
            Some(Role::Prefill) => "kv_producer",
            Some(Role::Decode) => "kv_consumer",
            None => "kv_both",
        };
        let store_connector = || {
            let mut o = Object::new();
            o.insert("kv_connector", "MooncakeStoreConnector");
            o.insert("kv_role", kv_role);
            o
        };
        let transfer_connector = || {
            // vLLM names RDMA over EFA `efa`; TCP keeps its name.
            let protocol = match self.transfer_protocol() {
                MOONCAKE_PROTOCOL_RDMA => "efa",
                other => other,
            };
            let mut extra = Object::new();
            extra.insert("mooncake_protocol", protocol);
            extra.insert("device_name", self.transfer_device());
            let mut o = Object::new();
            o.insert("kv_connector", "MooncakeConnector");
            o.insert("kv_role", kv_role);
            o.insert("kv_connector_extra_config", extra);
            o
        };
        let config = match (self.mode, role) {
            (Mode::Store, _) | (_, None) => store_connector(),
            (Mode::Disaggregated, Some(_)) => transfer_connector(),
            (Mode::Both, Some(_)) => {
                let mut extra = Object::new();
                extra.insert(
                    "connectors",
                    vec![
                        Value::Object(transfer_connector()),
                        Value::Object(store_connector()),
                    ],
                );
                let mut o = Object::new();
                o.insert("kv_connector", "MultiConnector");
                o.insert("kv_role", kv_role);
                o.insert("kv_connector_extra_config", extra);
                o
            }
        };
        Value::Object(config).to_json()
    }

    /// `mooncake.json`, keys sorted. `cold_tier_bucket` stands for the S3 URI
    /// the monitor resolves from its region's configuration.
    pub fn mooncake_json(&self, cold_tier_bucket: &str) -> String {
        // Inserted in sorted key order, as json.dumps(sort_keys=True) prints.
        let mut o = Object::new();
        let store = self.store_enabled();
        if store && self.cold_tier_enabled() {
            o.insert("cold_tier_s3_uri", cold_tier_bucket);
        }
        o.insert(
            "device_name",
            self.store_text("device_name")
                .unwrap_or_else(|| self.transfer_device()),
        );
        if store {
            let size = |key: &str, default: &str| -> Value {
                match self.section("store").and_then(|s| s.get(key)) {
                    Some(v @ (Value::Str(_) | Value::Int(_))) => v.clone(),
                    _ => Value::str(default),
                }
            };
            o.insert(
                "global_segment_size",
                size("global_segment_size", MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE),
            );
            o.insert(
                "local_buffer_size",
                size("local_buffer_size", MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE),
            );
            let master = format!("{MOONCAKE_MASTER_NAME}:{MOONCAKE_MASTER_RPC_PORT}");
            o.insert(
                "master_server_address",
                self.store_text("master_server_address").unwrap_or(&master),
            );
        }
        let metadata =
            format!("http://{MOONCAKE_MASTER_NAME}:{MOONCAKE_MASTER_METADATA_PORT}/metadata");
        o.insert(
            "metadata_server",
            self.store_text("metadata_server").unwrap_or(&metadata),
        );
        o.insert("protocol", self.store_protocol());
        Value::Object(o).to_json()
    }
}
