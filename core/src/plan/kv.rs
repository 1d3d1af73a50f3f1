//! The two texts a mooncake endpoint's pods are configured with: vLLM's
//! `--kv-transfer-config` per role and the shared `mooncake.json`, both as
//! Python's `json.dumps` prints them (GCO_FACTS_NEWEST 4.3, 4.4). The
//! plan and the manifests both render them from here.

use crate::json::{Object, Value};
use crate::limits::{
    MOONCAKE_AUTOSCALE_DEFAULT_MAX, MOONCAKE_AUTOSCALE_DEFAULT_MIN, MOONCAKE_BOOTSTRAP_PORT_SPAN,
    MOONCAKE_DEFAULT_BOOTSTRAP_BASE_PORT, MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE,
    MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE, MOONCAKE_DEFAULT_PROXY_REPLICAS,
    MOONCAKE_DEFAULT_PROXY_SCHEDULING,
};
use crate::mooncake::{
    MetricKind, Mode, Role, TransferProtocol, needs_shared_master, transfer_protocol_of,
};
use crate::pyrepr::py_str;
use crate::region::RegionContext;

/// The highest TCP port.
const MAX_TCP_PORT: i64 = 65535;

/// The parts of a valid `mooncake` block the monitor reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block<'a> {
    pub mode: Mode,
    pub block: &'a Object,
}

impl<'a> Block<'a> {
    pub(crate) fn section(&self, key: &str) -> Option<&'a Object> {
        self.block.get(key)?.as_object()
    }

    fn text(&self, section: &str, key: &str) -> Option<&'a str> {
        self.section(section)?.get(key)?.as_str()
    }

    /// `transfer.protocol` as stored, `rdma` when absent.
    pub fn transfer_protocol(&self) -> &'a str {
        transfer_protocol_of(self.block)
    }

    /// `transfer.device_name`; empty asks Mooncake to pick the interface.
    pub fn transfer_device(&self) -> &'a str {
        self.text("transfer", "device_name").unwrap_or("")
    }

    /// The store counts as on when `store.enabled` is truthy (Python's
    /// `if store.get("enabled")`), as the monitor reads it.
    pub fn store_enabled(&self) -> bool {
        self.section("store")
            .and_then(|s| s.get("enabled"))
            .is_some_and(Value::is_truthy)
    }

    /// The cold tier needs `cold_tier_enabled is True` on an enabled store.
    pub fn cold_tier_enabled(&self) -> bool {
        self.store_enabled()
            && self
                .section("store")
                .and_then(|s| s.get("cold_tier_enabled"))
                .is_some_and(Value::is_true)
    }

    /// The monitor's `_needs_shared_master` (see [`needs_shared_master`]).
    pub fn needs_master(&self) -> bool {
        needs_shared_master(self.mode, self.block)
    }

    /// Whether the pods move KV blocks over EFA and so run on EFA nodes:
    /// `transfer.protocol` is `rdma` (as read, for every mode's pods).
    pub fn uses_rdma(&self) -> bool {
        self.transfer_protocol() == TransferProtocol::Rdma.as_str()
    }

    /// `VLLM_MOONCAKE_BOOTSTRAP_PORT` and the NetworkPolicy window's base:
    /// Python's `int(transfer.bootstrap_base_port)`, the default when absent
    /// or unparsable (no range check, as the monitor does).
    pub fn bootstrap_base_port(&self) -> i64 {
        let given = self
            .section("transfer")
            .and_then(|t| t.get("bootstrap_base_port"));
        let parsed = match given {
            Some(Value::Int(i)) => i.as_i64(),
            Some(Value::Bool(b)) => Some(i64::from(*b)),
            Some(Value::Float(f)) if f.is_finite() => Some(f.trunc() as i64),
            Some(Value::Str(s)) => s.as_str().and_then(python_int),
            _ => None,
        };
        parsed.unwrap_or(MOONCAKE_DEFAULT_BOOTSTRAP_BASE_PORT)
    }

    /// The TCP window `allow-rdma-bootstrap` opens: the base port, up to
    /// [`MOONCAKE_BOOTSTRAP_PORT_SPAN`] above it but not past 65535.
    pub fn bootstrap_window(&self) -> (i64, i64) {
        let base = self.bootstrap_base_port();
        (
            base,
            (base + MOONCAKE_BOOTSTRAP_PORT_SPAN).min(MAX_TCP_PORT),
        )
    }

    /// A store byte size as stored (a decimal string, or an int), else the
    /// monitor's default.
    fn store_size(&self, key: &str, default: &str) -> Value {
        match self.section("store").and_then(|s| s.get(key)) {
            Some(v @ (Value::Str(_) | Value::Int(_))) => v.clone(),
            _ => Value::str(default),
        }
    }

    /// `topology.<role>`, 1 when absent.
    pub fn topology_count(&self, role: Role) -> i64 {
        self.section("topology")
            .and_then(|t| t.get(role.as_str()))
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .unwrap_or(1)
    }

    /// The replicas a role's Deployment is created with (4.3): the role's
    /// integer `min_replicas` while `autoscaling.enabled` is truthy, else its
    /// topology count. The single instance of `store` mode always gets 1.
    pub fn role_replicas(&self, role: Option<Role>) -> i64 {
        let Some(role) = role else { return 1 };
        let autoscaling = self.section("autoscaling");
        let seeded = autoscaling
            .filter(|a| a.get("enabled").is_some_and(Value::is_truthy))
            .and_then(|a| a.get(role.as_str())?.as_object()?.get("min_replicas"))
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64());
        seeded.unwrap_or_else(|| self.topology_count(role))
    }

    /// A role's autoscaler (4.8): only when `autoscaling.enabled is True` and
    /// the role's block is a mapping. Note that replica seeding reads
    /// `enabled` by truthiness instead: the monitor does both.
    pub fn role_autoscaling(&self, role: Role) -> Option<RoleScaling> {
        let autoscaling = self.section("autoscaling")?;
        if !autoscaling.get("enabled").is_some_and(Value::is_true) {
            return None;
        }
        let bounds = autoscaling.get(role.as_str())?.as_object()?;
        let int = |key: &str, default: i64| {
            bounds
                .get(key)
                .and_then(Value::as_int)
                .and_then(|i| i.as_i64())
                .unwrap_or(default)
        };
        let given = match bounds.get("metrics") {
            Some(Value::List(metrics)) => metrics.as_slice(),
            _ => &[],
        };
        let mut metrics: Vec<Metric> = given.iter().filter_map(Metric::of).collect();
        if metrics.is_empty() {
            let (kind, target) = MetricKind::DEFAULT_TARGET;
            metrics.push(Metric { kind, target });
        }
        Some(RoleScaling {
            min_replicas: int("min_replicas", MOONCAKE_AUTOSCALE_DEFAULT_MIN),
            max_replicas: int("max_replicas", MOONCAKE_AUTOSCALE_DEFAULT_MAX),
            metrics,
        })
    }

    /// `proxy.<key>` when set and not null.
    pub fn proxy_field(&self, key: &str) -> Option<&'a Value> {
        self.section("proxy")?.get(key).filter(|v| !v.is_null())
    }

    /// The Secret the proxy reads its admin key from when the spec names one.
    pub fn named_admin_secret(&self) -> Option<&'a str> {
        self.proxy_field("admin_api_key_secret")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// `proxy.replicas` when it is an int >= 1, else 1 (4.5).
    pub fn proxy_replicas(&self) -> i64 {
        self.proxy_field("replicas")
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .filter(|n| *n >= 1)
            .unwrap_or(MOONCAKE_DEFAULT_PROXY_REPLICAS)
    }

    /// `proxy.scheduling`, `round_robin` when unset.
    pub fn proxy_scheduling(&self) -> String {
        self.proxy_field("scheduling")
            .map_or_else(|| MOONCAKE_DEFAULT_PROXY_SCHEDULING.to_owned(), py_str)
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
                rdma if rdma == TransferProtocol::Rdma.as_str() => "efa",
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

    /// `mooncake.json` as the monitor writes it (`json.dumps(cfg,
    /// sort_keys=True)`): protocol and device only from `transfer`, the
    /// master and metadata addresses from the region, never from the spec.
    /// `cold_tier_uri` is used only when [`Block::cold_tier_enabled`].
    pub fn mooncake_json(&self, region: &RegionContext, cold_tier_uri: &str) -> String {
        let mut o = Object::new();
        if self.cold_tier_enabled() {
            o.insert("cold_tier_s3_uri", cold_tier_uri);
        }
        o.insert("device_name", self.transfer_device());
        if self.store_enabled() {
            o.insert(
                "global_segment_size",
                self.store_size("global_segment_size", MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE),
            );
            o.insert(
                "local_buffer_size",
                self.store_size("local_buffer_size", MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE),
            );
            o.insert("master_server_address", region.master_address());
        }
        o.insert("metadata_server", region.metadata_server());
        o.insert("protocol", self.transfer_protocol());
        // `sort_keys=True` without a sort (whose code the wasm builds would
        // carry): the keys above are inserted in code-point order.
        debug_assert!(o.iter().map(|(k, _)| k.as_str()).is_sorted());
        Value::Object(o).to_json()
    }
}

/// A role autoscaler's settings, defaults applied (4.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleScaling {
    pub min_replicas: i64,
    pub max_replicas: i64,
    /// The known metrics, in the spec's order; never empty.
    pub metrics: Vec<Metric>,
}

impl RoleScaling {
    /// Any GPU metric makes the autoscaler a KEDA ScaledObject.
    pub fn needs_keda(&self) -> bool {
        self.metrics.iter().any(|m| m.kind.is_gpu())
    }
}

/// One autoscaling metric the monitor understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    pub kind: MetricKind,
    /// Target utilisation, percent.
    pub target: i64,
}

impl Metric {
    /// A metric entry `{"type": t, "target": n}`; `None` (skipped, as the
    /// monitor skips unknown types) when the type is unknown or the target
    /// is not an integer (as read). An absent target is the default 70.
    fn of(v: &Value) -> Option<Metric> {
        let m = v.as_object()?;
        let kind = MetricKind::parse(m.get("type")?.as_str()?)?;
        let target = match m.get("target") {
            None => MetricKind::DEFAULT_TARGET.1,
            Some(t) => t.as_int()?.as_i64()?,
        };
        Some(Metric { kind, target })
    }
}

/// Python's `int(text)` for a decimal string: surrounding whitespace, a
/// sign and `_` between digits are allowed.
fn python_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (sign, digits) = match t.as_bytes().first()? {
        b'-' => (-1, &t[1..]),
        b'+' => (1, &t[1..]),
        _ => (1, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    digits
        .replace('_', "")
        .parse::<i64>()
        .ok()
        .map(|n| sign * n)
}
