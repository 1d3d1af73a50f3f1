//! The objects of a plain endpoint and of each mooncake mode, all to be
//! applied; [`super::plan`] turns that into what the state asks for.

use super::{Action, Block, Kind, PlanError, PlannedObject};
use crate::json::{Object, Value};
use crate::limits::{
    DEFAULT_GPU_COUNT, DEFAULT_PORT, DEFAULT_REPLICAS, EFA_RESOURCE, KEDA_METRICS,
    MOONCAKE_DEFAULT_AUTOSCALE_METRIC, MOONCAKE_DEFAULT_PROXY_REPLICAS,
    MOONCAKE_DEFAULT_PROXY_SCHEDULING, MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME,
    MOONCAKE_MASTER_RPC_PORT,
};
use crate::mooncake::Role;
use crate::record::Record;

fn object(kind: Kind, name: impl Into<String>, settings: Object) -> PlannedObject {
    PlannedObject {
        kind,
        name: name.into(),
        action: Action::Apply,
        shared: false,
        settings,
    }
}

/// The spec's settings every serving pod shares.
struct Pod<'a> {
    spec: &'a Object,
    image: String,
}

impl<'a> Pod<'a> {
    fn new(record: &'a Record, region: &str) -> Result<Pod<'a>, PlanError> {
        let spec = &record.spec;
        // The monitor pulls the region's own ECR copy when deploy wrote one.
        let regional = spec
            .get("region_image_uris")
            .and_then(Value::as_object)
            .and_then(|m| m.get(region));
        let image = regional
            .or_else(|| spec.get("image"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty());
        let Some(image) = image else {
            return Err(PlanError {
                path: "spec.image".into(),
                message: "Image must be a non-empty string".into(),
            });
        };
        Ok(Pod {
            spec,
            image: image.to_owned(),
        })
    }

    fn get(&self, key: &str, default: Value) -> Value {
        self.spec
            .get(key)
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(default)
    }

    fn port(&self) -> Value {
        self.get("port", Value::int(DEFAULT_PORT))
    }

    /// A serving Deployment's settings: replicas, then the container (whose
    /// arguments are `--kv-transfer-config` and then the spec's `args`).
    fn deployment(&self, replicas: Value, kv_transfer_config: Option<String>) -> Object {
        let mut s = Object::new();
        s.insert("replicas", replicas);
        s.insert("image", self.image.as_str());
        s.insert("port", self.port());
        s.insert(
            "gpu_count",
            self.get("gpu_count", Value::int(DEFAULT_GPU_COUNT)),
        );
        if let Some(gpu_type) = self.spec.get("gpu_type").filter(|v| v.is_truthy()) {
            s.insert("gpu_type", gpu_type.clone());
        }
        if let Some(config) = kv_transfer_config {
            s.insert("kv_transfer_config", config);
        }
        if let Some(extra @ Value::List(_)) = self.spec.get("args") {
            s.insert("extra_args", extra.clone());
        }
        s
    }

    fn service(&self, selects: &str) -> Object {
        let mut s = Object::new();
        s.insert("selects", selects);
        s.insert("port", self.port());
        s
    }
}

/// A plain endpoint: one Deployment and its Service.
pub(super) fn plain(record: &Record, region: &str) -> Result<Vec<PlannedObject>, PlanError> {
    let pod = Pod::new(record, region)?;
    let name = &record.endpoint_name;
    Ok(vec![
        object(
            Kind::Deployment,
            name,
            pod.deployment(pod.get("replicas", Value::int(DEFAULT_REPLICAS)), None),
        ),
        object(Kind::Service, name, pod.service(name)),
    ])
}

/// A mooncake endpoint: its config, the shared master when needed, the
/// serving roles with their autoscalers, and the PD proxy of split modes.
pub(super) fn mooncake(
    record: &Record,
    region: &str,
    block: Block<'_>,
) -> Result<Vec<PlannedObject>, PlanError> {
    let pod = Pod::new(record, region)?;
    let name = record.endpoint_name.as_str();
    let mut out = Vec::new();

    let config_map = format!("{name}-mooncake");
    let cold_tier = format!("<the cold-tier bucket the monitor resolves in {region}>");
    let mut data = Object::new();
    data.insert("mooncake.json", block.mooncake_json(&cold_tier));
    out.push(object(Kind::ConfigMap, &config_map, data));

    if block.needs_master() {
        let mut ports = Object::new();
        ports.insert("rpc", MOONCAKE_MASTER_RPC_PORT);
        ports.insert("metadata", MOONCAKE_MASTER_METADATA_PORT);
        for kind in [Kind::StatefulSet, Kind::Service] {
            let mut settings = Object::new();
            settings.insert("ports", ports.clone());
            out.push(PlannedObject {
                shared: true,
                ..object(kind, MOONCAKE_MASTER_NAME, settings)
            });
        }
    }

    if !block.mode.is_split() {
        let mut settings = pod.deployment(
            pod.get("replicas", Value::int(1)),
            Some(block.kv_transfer_config(None)),
        );
        placement(&mut settings, &block, None, &config_map);
        out.push(object(Kind::Deployment, name, settings));
        out.push(object(Kind::Service, name, pod.service(name)));
        return Ok(out);
    }

    for role in [Role::Prefill, Role::Decode] {
        let role_name = format!("{name}-{}", role.as_str());
        let topology = block.block.get("topology").and_then(Value::as_object);
        let count = topology
            .and_then(|t| t.get(role.as_str()))
            .cloned()
            .unwrap_or(Value::int(1));
        let scaler = autoscaler(&block, role, &role_name, &count);
        let replicas = scaler
            .as_ref()
            .and_then(|s| s.settings.get("min_replicas"))
            .cloned()
            .unwrap_or(count);
        let mut settings = pod.deployment(replicas, Some(block.kv_transfer_config(Some(role))));
        settings.insert("role", role.as_str());
        placement(&mut settings, &block, Some(role), &config_map);
        if let Some(scaler) = &scaler {
            settings.insert(
                "autoscaler",
                format!("{} {}", scaler.kind.as_str(), scaler.name),
            );
        }
        out.push(object(Kind::Deployment, &role_name, settings));
        out.push(object(Kind::Service, &role_name, pod.service(&role_name)));
        out.extend(scaler);
    }
    out.extend(proxy(name, &pod, &block));
    Ok(out)
}

/// The config the pods mount, and EFA placement for RDMA pods.
fn placement(settings: &mut Object, block: &Block<'_>, role: Option<Role>, config_map: &str) {
    settings.insert("config_map", config_map);
    if !block.role_uses_rdma(role) {
        return;
    }
    let mut toleration = Object::new();
    toleration.insert("key", EFA_RESOURCE);
    toleration.insert("operator", "Exists");
    let mut selector = Object::new();
    selector.insert("efa", "true");
    selector.insert("mooncake-efa", "true");
    let mut resources = Object::new();
    resources.insert(EFA_RESOURCE, 1);
    let mut efa = Object::new();
    efa.insert("tolerations", vec![Value::Object(toleration)]);
    efa.insert("node_selector", selector);
    efa.insert("gpu_container_resources", resources);
    settings.insert("efa", efa);
}

/// A role's autoscaler: only when autoscaling is on and the role has an
/// integer minimum, which its Deployment then starts at.
fn autoscaler(block: &Block<'_>, role: Role, target: &str, count: &Value) -> Option<PlannedObject> {
    let autoscaling = block.block.get("autoscaling")?.as_object()?;
    if !autoscaling.get("enabled").is_some_and(Value::is_true) {
        return None;
    }
    let role_block = autoscaling.get(role.as_str())?.as_object()?;
    let min = role_block
        .get("min_replicas")
        .filter(|v| matches!(v, Value::Int(_)))?;
    let metrics = match role_block.get("metrics") {
        Some(Value::List(metrics)) if !metrics.is_empty() => metrics.clone(),
        _ => {
            let (kind, target) = MOONCAKE_DEFAULT_AUTOSCALE_METRIC;
            let mut metric = Object::new();
            metric.insert("type", kind);
            metric.insert("target", target);
            vec![Value::Object(metric)]
        }
    };
    let needs_keda = metrics.iter().any(|m| {
        let kind = m
            .as_object()
            .and_then(|m| m.get("type"))
            .and_then(Value::as_str);
        kind.is_some_and(|k| KEDA_METRICS.contains(&k))
    });
    let mut settings = Object::new();
    settings.insert("target", target);
    settings.insert("min_replicas", min.clone());
    // Without a ceiling the role may not grow past its topology count.
    let max = role_block
        .get("max_replicas")
        .filter(|v| matches!(v, Value::Int(_)))
        .unwrap_or(count);
    settings.insert("max_replicas", max.clone());
    settings.insert("metrics", metrics);
    let kind = if needs_keda {
        Kind::ScaledObject
    } else {
        Kind::HorizontalPodAutoscaler
    };
    Some(object(kind, target, settings))
}

/// The PD proxy in front of a split topology: its config, admin key,
/// Deployment and Service.
fn proxy(name: &str, pod: &Pod<'_>, block: &Block<'_>) -> Vec<PlannedObject> {
    let proxy = block.block.get("proxy").and_then(Value::as_object);
    let field = |key: &str| proxy.and_then(|p| p.get(key)).filter(|v| !v.is_null());
    let proxy_name = format!("{name}-proxy");
    let config_map = format!("{name}-pd-proxy");
    let named_secret = field("admin_api_key_secret")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let secret = named_secret.map_or_else(|| format!("{name}-admin"), str::to_owned);

    let mut out = Vec::new();
    let mut config = Object::new();
    config.insert(
        "scheduling",
        field("scheduling")
            .cloned()
            .unwrap_or(Value::str(MOONCAKE_DEFAULT_PROXY_SCHEDULING)),
    );
    config.insert("prefill_service", format!("{name}-prefill"));
    config.insert("decode_service", format!("{name}-decode"));
    out.push(object(Kind::ConfigMap, &config_map, config));
    if named_secret.is_none() {
        let mut settings = Object::new();
        settings.insert("holds", "the PD proxy's admin API key");
        out.push(object(Kind::Secret, &secret, settings));
    }

    // The builder defaults the proxy image to the endpoint's, which the
    // monitor pulls from the region's ECR copy like the roles' image.
    let spec_image = pod.spec.get("image").and_then(Value::as_str);
    let image = match field("image").and_then(Value::as_str) {
        Some(image) if Some(image) != spec_image => image.to_owned(),
        _ => pod.image.clone(),
    };
    let mut settings = Object::new();
    settings.insert(
        "replicas",
        field("replicas")
            .cloned()
            .unwrap_or(Value::int(MOONCAKE_DEFAULT_PROXY_REPLICAS)),
    );
    settings.insert("image", image);
    settings.insert("port", pod.port());
    settings.insert("config_map", config_map);
    settings.insert("admin_key_secret", secret);
    out.push(object(Kind::Deployment, &proxy_name, settings));
    out.push(object(Kind::Service, &proxy_name, pod.service(&proxy_name)));
    out
}
