//! The settings a reviewer checks on each object of the skeleton, all to be
//! applied; [`super::plan`] turns that into what the state asks for.

use super::{
    Action, AllowRule, Block, Kind, Part, PlanError, PlannedObject, ServingSpec, Skeleton,
    admin_secret_name, mooncake_config_name, proxy_name, proxy_program_name, serving_name,
    skeleton,
};
use crate::framework::{SGLANG_STARTUP_SECONDS, sglang_launcher, sglang_model};
use crate::json::{Object, Value};
use crate::limits::{
    EFA_RESOURCE, MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
    MOONCAKE_PROXY_PORT, SERVICE_PORT,
};
use crate::mooncake::Role;
use crate::record::Record;
use crate::region::RegionContext;

/// Every object of `record`'s skeleton in `ctx.region`, with its settings.
pub(super) fn render(
    record: &Record,
    ctx: &RegionContext,
    block: Option<&Block<'_>>,
) -> Result<Vec<PlannedObject>, PlanError> {
    let pod = Pod::new(record, &ctx.region)?;
    let name = record.endpoint_name.as_str();
    let objects = skeleton(name, block);
    let settings = |object: &Skeleton| -> Object {
        let Some(block) = block else {
            return match object.kind {
                Kind::Deployment => pod.deployment(pod.serving.replicas_value(), None),
                _ => pod.service(&object.name),
            };
        };
        match (object.part, object.kind) {
            (Part::Master, _) => master(),
            (Part::AllowRule(rule), _) => allow_rule(rule, block),
            (Part::MooncakeConfig, _) => mooncake_config(name, ctx, block),
            (Part::Serving(role), Kind::Deployment) => {
                let scaler =
                    role.and_then(|role| objects.iter().find(|o| o.part == Part::Autoscaler(role)));
                role_deployment(&pod, name, block, role, scaler)
            }
            (Part::Serving(_), _) => pod.service(&object.name),
            (Part::Autoscaler(role), _) => autoscaler(block, role, &object.name),
            (Part::ProxyProgram, _) => proxy_program(name, block),
            (Part::AdminSecret, _) => {
                let mut settings = Object::new();
                settings.insert("holds", "the PD proxy's admin API key");
                settings
            }
            (Part::Proxy, Kind::Deployment) => proxy_deployment(name, block),
            (Part::Proxy, _) => proxy_service(name),
        }
    };
    Ok(objects
        .iter()
        .map(|object| PlannedObject {
            kind: object.kind,
            name: object.name.clone(),
            action: Action::Apply,
            shared: object.part.is_shared(),
            settings: settings(object),
        })
        .collect())
}

/// The spec's settings every serving pod shares.
struct Pod<'a> {
    serving: ServingSpec<'a>,
    image: &'a str,
}

impl<'a> Pod<'a> {
    fn new(record: &'a Record, region: &str) -> Result<Pod<'a>, PlanError> {
        let serving = ServingSpec { spec: &record.spec };
        Ok(Pod {
            serving,
            image: serving.image(region)?,
        })
    }

    /// A serving Deployment's settings: replicas, then the container (whose
    /// arguments are `--kv-transfer-config` and then the spec's `args`).
    fn deployment(&self, replicas: Value, kv_transfer_config: Option<String>) -> Object {
        let spec = self.serving.spec;
        let mut s = Object::new();
        s.insert("replicas", replicas);
        s.insert("image", self.image);
        s.insert("port", self.serving.port_value());
        s.insert("gpu_count", self.serving.gpu_count_value());
        if let Some(gpu_type) = spec.get("gpu_type").filter(|v| v.is_truthy()) {
            s.insert("gpu_type", gpu_type.clone());
        }
        if let Some(config) = kv_transfer_config {
            s.insert("kv_transfer_config", config);
        }
        if let Some(extra @ Value::List(_)) = spec.get("args") {
            s.insert("extra_args", extra.clone());
        }
        if self.serving.runs_sglang_launcher() {
            s.insert(
                "launcher",
                sglang_launcher(self.serving.port(), sglang_model(spec)),
            );
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
        s.insert("port", self.serving.port_value());
        s
    }
}

/// The shared master's ports (StatefulSet and Service alike).
fn master() -> Object {
    let mut ports = Object::new();
    ports.insert("rpc", MOONCAKE_MASTER_RPC_PORT);
    ports.insert("metadata", MOONCAKE_MASTER_METADATA_PORT);
    let mut settings = Object::new();
    settings.insert("ports", ports);
    settings
}

/// An allow rule of the namespace: what it selects, whom it admits and on
/// which TCP ports.
fn allow_rule(rule: AllowRule, block: &Block<'_>) -> Object {
    let inference = "gco.io/type=inference";
    let master = format!("app={MOONCAKE_MASTER_NAME}");
    let (selects, ports) = match rule {
        AllowRule::InferenceInternal => (inference, "all".to_owned()),
        AllowRule::PodToMaster => (master.as_str(), MOONCAKE_MASTER_RPC_PORT.to_string()),
        AllowRule::PodToMetadata => (master.as_str(), MOONCAKE_MASTER_METADATA_PORT.to_string()),
        AllowRule::RdmaBootstrap => {
            let (base, end) = block.bootstrap_window();
            (inference, format!("{base}-{end}"))
        }
    };
    let mut settings = Object::new();
    settings.insert("selects", selects);
    settings.insert("from", inference);
    settings.insert("tcp_ports", ports);
    if rule == AllowRule::InferenceInternal {
        settings.insert(
            "egress",
            format!("{inference} (all TCP), {master} (TCP {MOONCAKE_MASTER_RPC_PORT}, {MOONCAKE_MASTER_METADATA_PORT})"),
        );
    }
    settings
}

/// `{name}-mooncake`'s `mooncake.json`. Without the bucket the plan names
/// where the monitor reads it.
fn mooncake_config(name: &str, ctx: &RegionContext, block: &Block<'_>) -> Object {
    let cold_tier = ctx.cold_tier_uri(name).unwrap_or_else(|| {
        format!(
            "s3://<SSM {} in {}>/mooncake-kv/{name}/",
            ctx.bucket_parameter(),
            ctx.region
        )
    });
    let mut data = Object::new();
    data.insert("mooncake.json", block.mooncake_json(ctx, &cold_tier));
    data
}

/// A role's Deployment (`None`: store mode's single instance), naming the
/// autoscaler that scales it.
fn role_deployment(
    pod: &Pod<'_>,
    name: &str,
    block: &Block<'_>,
    role: Option<Role>,
    scaler: Option<&Skeleton>,
) -> Object {
    let replicas = Value::int(block.role_replicas(role));
    let mut settings = pod.deployment(replicas, Some(block.kv_transfer_config(role)));
    if let Some(role) = role {
        settings.insert("role", role.as_str());
    }
    placement(&mut settings, block, &mooncake_config_name(name));
    if let Some(scaler) = scaler {
        settings.insert(
            "autoscaler",
            format!("{} {}", scaler.kind.as_str(), scaler.name),
        );
    }
    settings
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
fn autoscaler(block: &Block<'_>, role: Role, target: &str) -> Object {
    let scaling = block
        .role_autoscaling(role)
        .expect("the skeleton lists an autoscaler only for a role that has one");
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
    settings
}

/// The PD proxy's program config: its scheduling and the two role Services.
fn proxy_program(name: &str, block: &Block<'_>) -> Object {
    let mut config = Object::new();
    config.insert("scheduling", block.proxy_scheduling());
    config.insert("prefill_service", serving_name(name, Some(Role::Prefill)));
    config.insert("decode_service", serving_name(name, Some(Role::Decode)));
    config
}

fn proxy_deployment(name: &str, block: &Block<'_>) -> Object {
    let mut settings = Object::new();
    settings.insert("replicas", block.proxy_replicas());
    // The builder stored the deploy image here; the monitor never rewrites
    // the proxy image for the region.
    if let Some(image) = block.proxy_field("image") {
        settings.insert("image", image.clone());
    }
    settings.insert("port", MOONCAKE_PROXY_PORT);
    settings.insert("config_map", proxy_program_name(name));
    settings.insert("admin_key_secret", admin_secret_name(name, block));
    settings
}

fn proxy_service(name: &str) -> Object {
    let mut service = Object::new();
    service.insert("selects", proxy_name(name));
    service.insert("port", SERVICE_PORT);
    service.insert("target_port", MOONCAKE_PROXY_PORT);
    service
}
