//! The topology picture: X prefill -> PD proxy -> Y decode, and the KV store
//! with its tiers, with what the fleet adds up to (instances, GPUs, EFA
//! devices). The editor draws it from its request, with steppers; the
//! endpoint page draws it from the stored spec. Counts are drawn in blocks
//! of one, ten or a hundred instances (one block size for both roles, so
//! they compare), so 2 x 3, 50 x 50 and 1000 x 1000 look different and all
//! cost the same to draw.

use gco_spec::json::Value;
use gco_spec::limits::{
    MOONCAKE_AUTOSCALE_DEFAULT_MAX, MOONCAKE_AUTOSCALE_DEFAULT_MIN,
    MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE, MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE,
    MOONCAKE_TOPOLOGY_MAX, MOONCAKE_TOPOLOGY_MIN,
};
use gco_spec::{Mode, OffloadTier, TransferProtocol, format_byte_size};
use leptos::prelude::*;

use crate::paths;

/// Most blocks a role is drawn with; the block size grows past it.
const MAX_BLOCKS: i64 = 12;

/// What the picture draws.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Shape {
    pub mode: Option<Mode>,
    /// Per-role instance counts; `None` when the count is not a valid one.
    pub prefill: Option<i64>,
    pub decode: Option<i64>,
    /// Instances of a mode without roles (the store's single instance).
    pub single: Option<i64>,
    /// GPUs each serving pod requests (`gpu_count`, 1 unless set).
    pub gpus_per_instance: Option<i64>,
    /// KV transfer over RDMA: each serving pod gets one EFA device.
    pub efa: bool,
    /// Per role, `autoscales MIN to MAX` when autoscaling is on.
    pub autoscale: [Option<String>; 2],
    pub store_tiers: Vec<String>,
}

impl Shape {
    /// The picture of an editor's deploy request.
    pub fn of_request(request: &Value) -> Shape {
        let at = |path: &[&str]| paths::get(request, path);
        // A block given as is is drawn as a stored one is.
        if at(&["mooncake_mode"]).is_none() && at(&["mooncake"]).is_some() {
            return Shape::of_spec(request);
        }
        let mode = at(&["mooncake_mode"])
            .and_then(Value::as_str)
            .and_then(Mode::parse);
        Shape::of(
            mode,
            [at(&["prefill_replicas"]), at(&["decode_replicas"])],
            at(&["gpu_count"]),
            at(&["mooncake_transfer", "protocol"]),
            at(&["mooncake_store"]),
            at(&["mooncake_autoscaling"]),
        )
    }

    /// The picture of a stored spec.
    pub fn of_spec(spec: &Value) -> Shape {
        let at = |path: &[&str]| paths::get(spec, path);
        let mode = at(&["mooncake", "mode"])
            .and_then(Value::as_str)
            .and_then(Mode::parse);
        Shape::of(
            mode,
            [
                at(&["mooncake", "topology", "prefill"]),
                at(&["mooncake", "topology", "decode"]),
            ],
            at(&["gpu_count"]),
            at(&["mooncake", "transfer", "protocol"]),
            at(&["mooncake", "store"]),
            at(&["mooncake", "autoscaling"]),
        )
    }

    fn of(
        mode: Option<Mode>,
        counts: [Option<&Value>; 2],
        gpu_count: Option<&Value>,
        protocol: Option<&Value>,
        store: Option<&Value>,
        autoscaling: Option<&Value>,
    ) -> Shape {
        // An absent count is the default of one; anything else must be a
        // count in range to be drawn.
        let count = |v: Option<&Value>| match v {
            None => Some(1),
            Some(v) => v
                .as_int()
                .and_then(|i| i.as_i64())
                .filter(|n| (MOONCAKE_TOPOLOGY_MIN..=MOONCAKE_TOPOLOGY_MAX).contains(n)),
        };
        let split = mode.is_some_and(Mode::is_split);
        let protocol = protocol
            .and_then(Value::as_str)
            .unwrap_or(TransferProtocol::DEFAULT.as_str());
        let text =
            |v: Option<&Value>, key: &str| paths::display(v.and_then(|v| paths::get(v, &[key])));
        let autoscale_on = autoscaling
            .and_then(|a| paths::get(a, &["enabled"]))
            .is_some_and(Value::is_true);
        let autoscale = gco_spec::Role::NAMES.map(|role| {
            let role_block = autoscaling.and_then(|a| paths::get(a, &[role]));
            let (min, max) = (
                text(role_block, "min_replicas"),
                text(role_block, "max_replicas"),
            );
            (autoscale_on && role_block.is_some()).then(|| {
                let min = if min.is_empty() {
                    MOONCAKE_AUTOSCALE_DEFAULT_MIN.to_string()
                } else {
                    min
                };
                let max = if max.is_empty() {
                    MOONCAKE_AUTOSCALE_DEFAULT_MAX.to_string()
                } else {
                    max
                };
                format!("autoscales {min} to {max}")
            })
        });
        let store_on = mode.is_some_and(Mode::has_store)
            || store
                .and_then(|s| paths::get(s, &["enabled"]))
                .is_some_and(Value::is_truthy);
        let mut store_tiers = Vec::new();
        if store_on {
            let size = |key: &str, default: &str| {
                let t = text(store, key);
                let t = if t.is_empty() { default.to_owned() } else { t };
                // A size GCO's rule refuses is drawn as such, not as a size.
                format_byte_size(&t).unwrap_or_else(|| "invalid".to_owned())
            };
            store_tiers.push(format!(
                "memory: {} segment, {} buffer",
                size("global_segment_size", MOONCAKE_DEFAULT_GLOBAL_SEGMENT_SIZE),
                size("local_buffer_size", MOONCAKE_DEFAULT_LOCAL_BUFFER_SIZE)
            ));
            let offload = text(store, "offload");
            if !offload.is_empty() && offload != OffloadTier::None.as_str() {
                store_tiers.push(format!("offload: {offload}"));
            }
            if store
                .and_then(|s| paths::get(s, &["cold_tier_enabled"]))
                .is_some_and(Value::is_true)
            {
                store_tiers.push("cold tier: object store".into());
            }
        }
        Shape {
            mode,
            prefill: split.then(|| count(counts[0])).flatten(),
            decode: split.then(|| count(counts[1])).flatten(),
            single: (mode == Some(Mode::Store)).then_some(1),
            gpus_per_instance: match gpu_count {
                None => Some(1),
                Some(v) => v.as_int().and_then(|i| i.as_i64()).filter(|n| *n >= 0),
            },
            efa: mode.is_some() && protocol == TransferProtocol::Rdma.as_str(),
            autoscale,
            store_tiers,
        }
    }

    /// Serving instances, when every count is known.
    pub fn instances(&self) -> Option<i64> {
        match self.mode? {
            Mode::Store => self.single,
            _ => Some(self.prefill? + self.decode?),
        }
    }

    /// `2p3d`, or what the mode is.
    pub fn label(&self) -> String {
        match (self.mode, self.prefill, self.decode) {
            (Some(m), Some(p), Some(d)) if m.is_split() => format!("{p}p{d}d"),
            (Some(Mode::Store), ..) => "single store instance".into(),
            (Some(_), ..) => "invalid counts".into(),
            (None, ..) => "plain endpoint".into(),
        }
    }

    /// `5 instances · 40 GPUs · 5 EFA devices`, when the counts are known.
    pub fn totals(&self) -> Option<String> {
        let n = self.instances()?;
        let plural = |n: i64, one: &str, many: &str| {
            format!("{} {}", group_digits(n), if n == 1 { one } else { many })
        };
        let mut parts = vec![plural(n, "instance", "instances")];
        if let Some(g) = self.gpus_per_instance {
            parts.push(plural(n * g, "GPU", "GPUs"));
        }
        parts.push(if self.efa {
            plural(n, "EFA device", "EFA devices")
        } else {
            "no EFA (TCP)".into()
        });
        Some(parts.join(" · "))
    }

    /// Instances per drawn block: 1, 10 or 100, one size for both roles.
    fn block(&self) -> i64 {
        let largest = self.prefill.unwrap_or(0).max(self.decode.unwrap_or(0));
        let mut block = 1;
        while largest > MAX_BLOCKS * block {
            block *= 10;
        }
        block
    }
}

/// `1,000`: counts read at a glance.
pub fn group_digits(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// The blocks a count is drawn with: full ones and a partial last one.
fn blocks(count: i64, block: i64) -> impl IntoView {
    let full = count / block;
    let rest = count % block;
    let mut out: Vec<AnyView> = (0..full)
        .map(|_| view! { <span class="node"></span> }.into_any())
        .collect();
    if rest > 0 {
        // In tenths, as classes: the page's CSP allows no inline style.
        let tenths = ((rest * 10 + block - 1) / block).clamp(1, 9);
        let class = format!("node partial q{tenths}");
        out.push(view! { <span class=class></span> }.into_any());
    }
    out
}

#[component]
fn Role(
    shape: Signal<Shape>,
    role: &'static str,
    /// What edits the count (the editor's box), when the picture is
    /// editable.
    stepper: Option<ViewFn>,
) -> impl IntoView {
    let count = move || {
        shape.with(|s| match role {
            "prefill" => s.prefill,
            _ => s.decode,
        })
    };
    let range = move || shape.with(|s| s.autoscale[usize::from(role == "decode")].clone());
    view! {
        <div class=format!("group {role}") data-role=role>
            <p class="role-head"><strong>{role}</strong>" "
                <span class="count">{move || count().map_or_else(|| "?".to_owned(), group_digits)}</span></p>
            <div class="nodes" aria-hidden="true">
                {move || count().map(|n| blocks(n, shape.with(Shape::block)))}
            </div>
            {stepper.map_or_else(|| ().into_any(), |s| s.run())}
            {move || range().map(|r| view! { <p class="range">{r}</p> })}
        </div>
    }
}

/// The picture of `shape`; with `steppers` (what edits the prefill and
/// the decode count), its counts are editable.
#[component]
pub fn Picture(
    shape: Signal<Shape>,
    #[prop(optional)] steppers: Option<(ViewFn, ViewFn)>,
) -> impl IntoView {
    let mode = move || shape.with(|s| s.mode);
    let legend = move || {
        let block = shape.with(Shape::block);
        (block > 1).then(|| format!("each block: {} instances", group_digits(block)))
    };
    view! {
        <section class="topology" aria-labelledby="topology-title">
            <h2 id="topology-title">"Topology " <span class="badge">{move || shape.with(Shape::label)}</span></h2>
            {move || match mode() {
                // The hint is the editor's; a stored plain endpoint is just that.
                None if steppers.is_some() => view! { <p class="muted">"Choose a Mooncake mode to serve with disaggregated prefill and decode or a KV store."</p> }.into_any(),
                None => view! { <p class="muted">"A plain endpoint: no Mooncake mode."</p> }.into_any(),
                Some(Mode::Store) => view! {
                    <div class="flow"><div class="group store-role"><div class="nodes"><span class="node"></span></div><p>"store instance"</p></div></div>
                }.into_any(),
                Some(_) => view! {
                    <div class="flow">
                        <Role shape=shape role="prefill" stepper=steppers.as_ref().map(|s| s.0.clone())/>
                        <div class="proxy"><span>"PD proxy"</span></div>
                        <Role shape=shape role="decode" stepper=steppers.as_ref().map(|s| s.1.clone())/>
                    </div>
                    {move || legend().map(|l| view! { <p class="legend muted">{l}</p> })}
                }.into_any(),
            }}
            {move || shape.with(Shape::totals).map(|t| view! { <p class="totals">{t}</p> })}
            {move || {
                let tiers = shape.with(|s| s.store_tiers.clone());
                (!tiers.is_empty()).then(|| view! {
                    <div class="kv">
                        <strong>"KV store"</strong>
                        <ul>{tiers.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
                    </div>
                })
            }}
        </section>
    }
}
