//! The objects of a plain endpoint and of each mooncake mode, all to be
//! applied; [`super::plan`] turns that into what the state asks for.

use super::{Action, Block, Kind, PlanError, PlannedObject, serving_image};
use crate::framework::{Framework, SGLANG_STARTUP_SECONDS, sglang_launcher, sglang_model};
use crate::json::{Object, Value};
use crate::limits::{
    EFA_RESOURCE, MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
    NETWORK_POLICY_INFERENCE_INTERNAL, NETWORK_POLICY_POD_TO_MASTER,
    NETWORK_POLICY_POD_TO_METADATA, NETWORK_POLICY_RDMA_BOOTSTRAP,
};
use crate::mooncake::Role;
use crate::record::Record;
use crate::region::RegionContext;

/// The PD proxy's fixed container port (GCO_FACTS_NEWEST 4.5).
pub(crate) const PD_PROXY_PORT: i64 = 8000;

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
        let image = serving_image(spec, region)?;
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
        self.get("port", Value::int(8000))
    }

    /// A serving Deployment's settings: replicas, then the container (whose
    /// arguments are `--kv-transfer-config` and then the spec's `args`).
    fn deployment(&self, replicas: Value, kv_transfer_config: Option<String>) -> Object {
        let mut s = Object::new();
        s.insert("replicas", replicas);
        s.insert("image", self.image.as_str());
        s.insert("port", self.port());
        s.insert("gpu_count", self.get("gpu_count", Value::int(1)));
        if let Some(gpu_type) = self.spec.get("gpu_type").filter(|v| v.is_truthy()) {
            s.insert("gpu_type", gpu_type.clone());
        }
        if let Some(config) = kv_transfer_config {
            s.insert("kv_transfer_config", config);
        }
        if let Some(extra @ Value::List(_)) = self.spec.get("args") {
            s.insert("extra_args", extra.clone());
        }
        let own_command = self.spec.get("command").is_some_and(|c| !c.is_null());
        if Framework::of_spec(self.spec) == Some(Framework::Sglang) && !own_command {
            let port = self
                .port()
                .as_int()
                .and_then(|p| p.as_i64())
                .unwrap_or(8000);
            s.insert("launcher", sglang_launcher(port, sglang_model(self.spec)));
            s.insert(
                "startup_probe_seconds",
                Value::int(i64::from(SGLANG_STARTUP_SECONDS)),
            );
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
            pod.deployment(pod.get("replicas", Value::int(1)), None),
        ),
        object(Kind::Service, name, pod.service(name)),
    ])
}

/// A mooncake endpoint: its config, the shared master when needed, the
/// serving roles with their autoscalers, and the PD proxy of split modes.
pub(super) fn mooncake(
    record: &Record,
    ctx: &RegionContext,
    block: Block<'_>,
) -> Result<Vec<PlannedObject>, PlanError> {
    let pod = Pod::new(record, &ctx.region)?;
    let name = record.endpoint_name.as_str();
    let mut out = Vec::new();

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
        out.extend(network_policies(&block));
    }

    let config_map = format!("{name}-mooncake");
    // Without the bucket the plan names where the monitor reads it.
    let cold_tier = ctx.cold_tier_uri(name).unwrap_or_else(|| {
        format!(
            "s3://<SSM {} in {}>/mooncake-kv/{name}/",
            ctx.bucket_parameter(),
            ctx.region
        )
    });
    let mut data = Object::new();
    data.insert("mooncake.json", block.mooncake_json(ctx, &cold_tier));
    out.push(object(Kind::ConfigMap, &config_map, data));

    if !block.mode.is_split() {
        let mut settings = pod.deployment(
            Value::int(block.role_replicas(None)),
            Some(block.kv_transfer_config(None)),
        );
        placement(&mut settings, &block, &config_map);
        out.push(object(Kind::Deployment, name, settings));
        out.push(object(Kind::Service, name, pod.service(name)));
        return Ok(out);
    }

    for role in [Role::Prefill, Role::Decode] {
        let role_name = format!("{name}-{}", role.as_str());
        let scaler = autoscaler(&block, role, &role_name);
        let replicas = Value::int(block.role_replicas(Some(role)));
        let mut settings = pod.deployment(replicas, Some(block.kv_transfer_config(Some(role))));
        settings.insert("role", role.as_str());
        placement(&mut settings, &block, &config_map);
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
    out.extend(proxy(name, &block));
    Ok(out)
}

/// The namespace's four allow rules, shared like the master: what each
/// selects, whom it admits and on which TCP ports.
fn network_policies(block: &Block<'_>) -> Vec<PlannedObject> {
    let inference = "gco.io/type=inference";
    let master = format!("app={MOONCAKE_MASTER_NAME}");
    let (base, end) = block.bootstrap_window();
    let rule = |name: &str, selects: &str, ports: String| {
        let mut settings = Object::new();
        settings.insert("selects", selects);
        settings.insert("from", inference);
        settings.insert("tcp_ports", ports);
        PlannedObject {
            shared: true,
            ..object(Kind::NetworkPolicy, name, settings)
        }
    };
    let mut internal = rule(NETWORK_POLICY_INFERENCE_INTERNAL, inference, "all".into());
    internal.settings.insert(
        "egress",
        format!("{inference} (all TCP), {master} (TCP {MOONCAKE_MASTER_RPC_PORT}, {MOONCAKE_MASTER_METADATA_PORT})"),
    );
    vec![
        internal,
        rule(
            NETWORK_POLICY_POD_TO_MASTER,
            &master,
            MOONCAKE_MASTER_RPC_PORT.to_string(),
        ),
        rule(
            NETWORK_POLICY_POD_TO_METADATA,
            &master,
            MOONCAKE_MASTER_METADATA_PORT.to_string(),
        ),
        rule(
            NETWORK_POLICY_RDMA_BOOTSTRAP,
            inference,
            format!("{base}-{end}"),
        ),
    ]
}

/// The config the pods mount, the KV bootstrap port, and EFA placement for
/// RDMA pods.
fn placement(settings: &mut Object, block: &Block<'_>, config_map: &str) {
    settings.insert("config_map", config_map);
    settings.insert("bootstrap_port", block.bootstrap_base_port());
    if !block.uses_rdma() {
        return;
    }
    let mut toleration = Object::new();
    toleration.insert("key", EFA_RESOURCE);
    toleration.insert("operator", "Equal");
    toleration.insert("value", "true");
    toleration.insert("effect", "NoSchedule");
    let mut selector = Object::new();
    selector.insert("efa", "true");
    selector.insert("mooncake-efa", "true");
    let mut resources = Object::new();
    resources.insert(EFA_RESOURCE, "1");
    let mut efa = Object::new();
    efa.insert("tolerations", vec![Value::Object(toleration)]);
    efa.insert("node_selector", selector);
    efa.insert("gpu_container_resources", resources);
    settings.insert("efa", efa);
}

/// A role's autoscaler, as [`Block::role_autoscaling`] reads it.
fn autoscaler(block: &Block<'_>, role: Role, target: &str) -> Option<PlannedObject> {
    let scaling = block.role_autoscaling(role)?;
    let metrics: Vec<Value> = scaling
        .metrics
        .iter()
        .map(|m| {
            let mut metric = Object::new();
            metric.insert("type", m.kind.as_str());
            metric.insert("target", m.target);
            Value::Object(metric)
        })
        .collect();
    let mut settings = Object::new();
    settings.insert("target", target);
    settings.insert("min_replicas", scaling.min_replicas);
    settings.insert("max_replicas", scaling.max_replicas);
    settings.insert("metrics", metrics);
    let kind = if scaling.needs_keda() {
        Kind::ScaledObject
    } else {
        Kind::HorizontalPodAutoscaler
    };
    Some(object(kind, target, settings))
}

/// The PD proxy in front of a split topology: its config, admin key,
/// Deployment and Service.
fn proxy(name: &str, block: &Block<'_>) -> Vec<PlannedObject> {
    let proxy_name = format!("{name}-proxy");
    let config_map = format!("{name}-pd-proxy");
    let named_secret = block.named_admin_secret();
    let secret = named_secret.map_or_else(|| format!("{name}-admin"), str::to_owned);

    let mut out = Vec::new();
    let mut config = Object::new();
    config.insert("scheduling", block.proxy_scheduling());
    config.insert("prefill_service", format!("{name}-prefill"));
    config.insert("decode_service", format!("{name}-decode"));
    out.push(object(Kind::ConfigMap, &config_map, config));
    if named_secret.is_none() {
        let mut settings = Object::new();
        settings.insert("holds", "the PD proxy's admin API key");
        out.push(object(Kind::Secret, &secret, settings));
    }

    let mut settings = Object::new();
    settings.insert("replicas", block.proxy_replicas());
    // The builder stored the deploy image here; the monitor never rewrites
    // the proxy image for the region.
    if let Some(image) = block.proxy_field("image") {
        settings.insert("image", image.clone());
    }
    settings.insert("port", PD_PROXY_PORT);
    settings.insert("config_map", config_map);
    settings.insert("admin_key_secret", secret);
    out.push(object(Kind::Deployment, &proxy_name, settings));
    let mut service = Object::new();
    service.insert("selects", proxy_name.as_str());
    service.insert("port", 80);
    service.insert("target_port", PD_PROXY_PORT);
    out.push(object(Kind::Service, &proxy_name, service));
    out
}
