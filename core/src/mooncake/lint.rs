//! Warnings: what the reference accepts but an author probably got wrong.
//! They never block a deploy.

use super::{Mode, OffloadTier, Role};
use crate::diagnostics::{Diagnostic, Report};
use crate::json::{Object, Value};
use crate::limits::MOONCAKE_PROXY_SCHEDULING;
use crate::suggest::did_you_mean;

/// The keys a block may have, in the order the builder writes them.
pub const BLOCK_KEYS: &[&str] = &[
    "mode",
    "topology",
    "store",
    "transfer",
    "proxy",
    "autoscaling",
];
const TOPOLOGY_KEYS: &[&str] = &Role::NAMES;
/// The keys of each section: the reference's schema plus what GCO's newest
/// monitor reads (GCO_FACTS_NEWEST 4.3-4.9: `store.master_image`,
/// `transfer.peer_addresses`).
const STORE_KEYS: &[&str] = &[
    "enabled",
    "metadata_server",
    "master_server_address",
    "protocol",
    "device_name",
    "global_segment_size",
    "local_buffer_size",
    "offload",
    "cold_tier_enabled",
    "master_image",
];
const TRANSFER_KEYS: &[&str] = &[
    "protocol",
    "device_name",
    "num_workers",
    "bootstrap_base_port",
    "abort_request_timeout",
    "peer_addresses",
];
const PROXY_KEYS: &[&str] = &["image", "scheduling", "admin_api_key_secret", "replicas"];
const AUTOSCALING_KEYS: &[&str] = &["enabled", "prefill", "decode"];
const ROLE_KEYS: &[&str] = &["min_replicas", "max_replicas", "metrics"];

/// Every member the checks know below the block, by its path in the block
/// (`autoscaling.<role>` for each role): any other member gets an
/// "unknown key" warning. The JSON Schemas' members are checked against it
/// (`core/tests/schema.rs`).
pub const SECTION_KEYS: [(&str, &[&str]); 7] = [
    ("topology", TOPOLOGY_KEYS),
    ("store", STORE_KEYS),
    ("transfer", TRANSFER_KEYS),
    ("proxy", PROXY_KEYS),
    ("autoscaling", AUTOSCALING_KEYS),
    ("autoscaling.prefill", ROLE_KEYS),
    ("autoscaling.decode", ROLE_KEYS),
];

pub(super) fn lint(block: &Value, report: &mut Report) {
    let Some(block) = block.as_object() else {
        return;
    };
    unknown_keys(block, "mooncake", BLOCK_KEYS, report);
    let sub = |key: &str| block.get(key).and_then(Value::as_object);

    if let Some(topology) = sub("topology") {
        unknown_keys(topology, "mooncake.topology", TOPOLOGY_KEYS, report);
        if block
            .get("mode")
            .is_some_and(|m| m.as_str() == Some(Mode::Store.as_str()))
        {
            report.push(Diagnostic::warning(
                "mooncake.topology",
                "mooncake.topology is ignored in 'store' mode, which runs a single instance",
            ));
        }
    }
    if let Some(store) = sub("store") {
        unknown_keys(store, "mooncake.store", STORE_KEYS, report);
        vocabulary(
            store,
            "offload",
            "mooncake.store.offload",
            &OffloadTier::NAMES,
            report,
        );
    }
    if let Some(store) = sub("store") {
        // GCO's rule takes 0 ([0, 2**63-1]); the monitor then renders a
        // store whose instances offer no memory (4.4, as read).
        if store.get("enabled").is_some_and(Value::is_truthy)
            && store.get("global_segment_size").is_some_and(|v| {
                matches!(v.as_str().map(str::trim), Some("0"))
                    || v.as_int().and_then(|i| i.as_i64()) == Some(0)
            })
        {
            report.push(Diagnostic::warning(
                "mooncake.store.global_segment_size",
                "mooncake.store.global_segment_size is 0: GCO's rule allows it (0 to 2**63-1 bytes), but then each instance gives the store no memory, and the store caches nothing",
            ));
        }
        for key in ["protocol", "device_name"] {
            if store.contains_key(key) {
                report.push(Diagnostic::warning(
                    format!("mooncake.store.{key}"),
                    format!("mooncake.store.{key} is not read by GCO's newest monitor: mooncake.json takes {key} from mooncake.transfer.{key}"),
                ));
            }
        }
    }
    if let Some(transfer) = sub("transfer") {
        unknown_keys(transfer, "mooncake.transfer", TRANSFER_KEYS, report);
    }
    if let Some(proxy) = sub("proxy") {
        unknown_keys(proxy, "mooncake.proxy", PROXY_KEYS, report);
        vocabulary(
            proxy,
            "scheduling",
            "mooncake.proxy.scheduling",
            &MOONCAKE_PROXY_SCHEDULING,
            report,
        );
    }
    if let Some(autoscaling) = sub("autoscaling") {
        unknown_keys(
            autoscaling,
            "mooncake.autoscaling",
            AUTOSCALING_KEYS,
            report,
        );
        let enabled = autoscaling.get("enabled").is_some_and(Value::is_true);
        for role in Role::NAMES {
            let Some(bounds) = autoscaling.get(role).and_then(Value::as_object) else {
                continue;
            };
            let path = format!("mooncake.autoscaling.{role}");
            unknown_keys(bounds, &path, ROLE_KEYS, report);
            if !enabled && !bounds.is_empty() {
                report.push(Diagnostic::warning(
                    path,
                    format!("{role} autoscaling bounds are ignored while mooncake.autoscaling.enabled is not true"),
                ));
            }
        }
    }
}

fn unknown_keys(obj: &Object, path: &str, known: &[&str], report: &mut Report) {
    for (key, _) in obj.iter() {
        let Value::Str(key) = key else { continue };
        if key.as_str().is_some_and(|k| known.contains(&k)) {
            continue;
        }
        let text = key.to_string_lossy();
        let hint = match did_you_mean(&text, known) {
            Some(s) => format!("; did you mean '{s}'?"),
            None => format!("; known keys: {}", known.join(", ")),
        };
        report.push(Diagnostic::warning(
            format!("{path}.{text}"),
            format!(
                "unknown key {} in {path}, which GCO ignores{hint}",
                crate::pyrepr::repr_str(key)
            ),
        ));
    }
}

fn vocabulary(obj: &Object, key: &str, path: &str, allowed: &[&str], report: &mut Report) {
    let Some(value) = obj.get(key) else { return };
    if value.as_str().is_some_and(|s| allowed.contains(&s)) {
        return;
    }
    report.push(Diagnostic::warning(
        path,
        format!(
            "{path} {} is not one GCO's monitor understands ({})",
            value.repr(),
            allowed.join(", ")
        ),
    ));
}
