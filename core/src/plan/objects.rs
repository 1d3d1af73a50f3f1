//! The settings a reviewer checks on each object of the skeleton, all to be
//! applied; [`super::plan`] turns that into what the state asks for.

use super::{
    Action, AllowRule, BaseObject, Block, Kind, Part, PlanError, PlannedObject, ServingSpec,
    Skeleton, admin_secret_name, mooncake_config_name, proxy_name, proxy_program_name,
    serving_name, skeleton,
};
use crate::framework::{
    GPU_NAME_NODE_LABEL, SGLANG_COMMAND, SGLANG_STARTUP_FAILURE_THRESHOLD,
    SGLANG_STARTUP_PERIOD_SECONDS, SGLANG_UNSUPPORTED_GPU_NAMES, sglang_args,
};
use crate::json::{Object, Value};
use crate::limits::{
    EFA_RESOURCE, ENDPOINT_TLS_PORT, ENDPOINT_TLS_PORT_NAME, ENDPOINT_TLS_PROXY_CONTAINER,
    MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
    MOONCAKE_PROXY_PORT,
};
use crate::mooncake::Role;
use crate::pyrepr::py_str;
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
    let canary = pod.serving.get("canary").and_then(Value::as_object);
    let objects = skeleton(name, &record.namespace, block, canary.is_some());
    let settings = |object: &Skeleton| -> Object {
        match (object.part, object.kind) {
            (Part::BasePass(base), _) => return base_pass(base),
            (Part::TlsProgram, _) => return tls_program(),
            (Part::Canary, Kind::Deployment) => {
                return pod.canary_deployment(canary.expect("a canary's skeleton"));
            }
            (Part::Canary, _) => return pod.service(&object.name),
            _ => {}
        }
        let Some(block) = block else {
            return match object.kind {
                Kind::Deployment => pod.deployment(pod.serving.replicas_value(), None),
                _ => pod.service(&object.name),
            };
        };
        match (object.part, object.kind) {
            (Part::BasePass(_) | Part::TlsProgram | Part::Canary, _) => {
                unreachable!("rendered above")
            }
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
            base_pass: matches!(object.part, Part::BasePass(_)),
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
        if self.serving.runs_sglang_launcher(self.image) {
            let args = match spec.get("args") {
                Some(Value::List(items)) => items.iter().map(py_str).collect(),
                _ => Vec::new(),
            };
            let mut line = SGLANG_COMMAND.join(" ");
            for arg in sglang_args(args, self.serving.port(), self.serving.env_has("MODEL")) {
                line.push(' ');
                line.push_str(&arg);
            }
            s.insert("launcher", line);
            s.insert(
                "startup_probe_seconds",
                Value::int(i64::from(
                    SGLANG_STARTUP_PERIOD_SECONDS * SGLANG_STARTUP_FAILURE_THRESHOLD,
                )),
            );
        }
        if self.serving.keeps_off_pre_ampere(self.image) {
            s.insert(
                "node_affinity",
                format!(
                    "{GPU_NAME_NODE_LABEL} NotIn {}",
                    SGLANG_UNSUPPORTED_GPU_NAMES.join(", ")
                ),
            );
        }
        s.insert("tls_sidecar", tls_sidecar(self.serving.port()));
        s
    }

    /// The canary's Deployment: the endpoint's pod with the canary's image
    /// and replicas (as read: GCO's `_reconcile_canary`).
    fn canary_deployment(&self, canary: &Object) -> Object {
        let replicas = canary.get("replicas").cloned().unwrap_or(Value::int(1));
        let mut s = self.deployment(replicas, None);
        if let Some(image) = canary.get("image") {
            s.insert("image", image.clone());
        }
        if let Some(weight) = canary.get("weight") {
            s.insert("weight", weight.clone());
        }
        s
    }

    fn service(&self, selects: &str) -> Object {
        model_service(selects)
    }
}

/// A model Service's settings: it selects the pods of `app`, and publishes
/// only the TLS sidecar's port.
fn model_service(app: &str) -> Object {
    let mut s = Object::new();
    s.insert("selects", app);
    s.insert("port", ENDPOINT_TLS_PORT);
    s.insert("target_port", ENDPOINT_TLS_PORT_NAME);
    s
}

/// What every model pod's TLS sidecar does.
fn tls_sidecar(upstream_port: i64) -> String {
    format!(
        "{ENDPOINT_TLS_PROXY_CONTAINER}: https :{ENDPOINT_TLS_PORT} -> 127.0.0.1:{upstream_port}"
    )
}

/// The sidecar's program, shared by the endpoint's pods and its canary.
fn tls_program() -> Object {
    let mut s = Object::new();
    s.insert("holds", "the program of every model pod's TLS sidecar");
    s
}

/// What the base pass keeps, and where GCO keeps it.
fn base_pass(base: BaseObject) -> Object {
    let (what, source) = match base {
        BaseObject::WriteFence | BaseObject::WriteFenceBinding => (
            "only the inference monitor changes what it manages in gco-inference",
            "09-tenant-write-fence.yaml",
        ),
        BaseObject::ProxyIngress => (
            "model pods admit only the inference proxy, on TCP 8443",
            "03-network-policies.yaml",
        ),
    };
    let mut s = Object::new();
    s.insert("holds", what);
    s.insert("applied_by", format!("GCO's base pass ({source})"));
    s
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
    settings.insert("tls_sidecar", tls_sidecar(MOONCAKE_PROXY_PORT));
    settings
}

fn proxy_service(name: &str) -> Object {
    model_service(&proxy_name(name))
}
