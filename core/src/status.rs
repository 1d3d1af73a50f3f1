//! Typed views of what GCO's monitors write into `region_status`, and of a
//! spec's `canary` block (GCO_FACTS_NEWEST sections 2.9 and 3).
//!
//! The record keeps `region_status` as stored; these views only read it.
//! Reading is lenient: a value of a shape this version does not expect (a
//! newer monitor's) is not an error, its key goes to the view's `extra`
//! with the keys it does not know, so nothing stored is out of sight.

use std::fmt;

use crate::json::{Object, Value};

/// A region's state as its monitor reports it: GCO's `RegionSyncState`
/// (`gco/models/inference_models.py@7a0b3c6fd4`), and `failed`, which its
/// monitor writes too.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegionState {
    /// No monitor has synced the region yet (the model's default).
    Pending,
    Creating,
    Running,
    Updating,
    Failed,
    Error,
    Stopping,
    Stopped,
    Deleting,
    Deleted,
    /// A state this version does not know, as written.
    Other(String),
}

impl RegionState {
    /// Every state GCO names, in `RegionSyncState`'s order, then `failed`.
    pub const KNOWN: [RegionState; 10] = [
        RegionState::Pending,
        RegionState::Creating,
        RegionState::Running,
        RegionState::Updating,
        RegionState::Stopping,
        RegionState::Stopped,
        RegionState::Deleting,
        RegionState::Deleted,
        RegionState::Error,
        RegionState::Failed,
    ];

    pub fn parse(text: &str) -> RegionState {
        RegionState::KNOWN
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or_else(|| RegionState::Other(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            RegionState::Pending => "pending",
            RegionState::Creating => "creating",
            RegionState::Running => "running",
            RegionState::Updating => "updating",
            RegionState::Failed => "failed",
            RegionState::Error => "error",
            RegionState::Stopping => "stopping",
            RegionState::Stopped => "stopped",
            RegionState::Deleting => "deleting",
            RegionState::Deleted => "deleted",
            RegionState::Other(text) => text,
        }
    }
}

impl fmt::Display for RegionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One region's entry of `region_status`, in the order the monitor writes
/// its keys.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RegionStatus {
    pub state: Option<RegionState>,
    pub replicas_ready: Option<i64>,
    pub replicas_desired: Option<i64>,
    /// ISO 8601 UTC, as the monitor wrote it.
    pub last_sync: Option<String>,
    pub lifecycle_id: Option<String>,
    /// The record's `region_generations[region]` an ordinary write was
    /// fenced with.
    pub region_generation: Option<String>,
    /// The record's `deletion_generation` a deleting write was fenced with.
    pub deletion_generation: Option<String>,
    pub error: Option<String>,
    /// Split modes only.
    pub roles: Option<Roles>,
    /// Only when the Mooncake store is on.
    pub store: Option<StoreStatus>,
    /// A classic canary's own rollout.
    pub canary: Option<CanaryStatus>,
    /// Consecutive complete absence checks while cleaning up (the purge
    /// needs 2).
    pub absence_observations: Option<i64>,
    /// Keys this version does not know, and known keys whose value has a
    /// shape it does not expect, as stored.
    pub extra: Object,
}

/// Ready and desired instances of a split-mode role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoleReplicas {
    pub ready: Option<i64>,
    /// The live Deployment's replicas, or the configured floor without one.
    pub desired: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roles {
    pub prefill: Option<RoleReplicas>,
    pub decode: Option<RoleReplicas>,
}

/// The shared Mooncake store in a region.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreStatus {
    /// Whether `mooncake-master` has a ready replica.
    pub ready: Option<bool>,
    /// The master's resolved address.
    pub master: Option<String>,
}

/// A classic canary's rollout in a region.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CanaryStatus {
    /// creating, updating or running.
    pub state: Option<RegionState>,
    pub image: Option<String>,
    pub weight: Option<i64>,
    pub replicas_ready: Option<i64>,
    pub replicas_desired: Option<i64>,
}

/// A spec's `canary` block as `canary_deploy` writes it: a second, classic
/// Deployment of another image that takes a share of the traffic.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CanarySpec {
    /// The canary's image.
    pub image: Option<String>,
    /// Percent of traffic, 1 to 99.
    #[cfg_attr(
        feature = "schema",
        schemars(range(min = crate::limits::CANARY_WEIGHT_MIN, max = crate::limits::CANARY_WEIGHT_MAX))
    )]
    pub weight: Option<i64>,
    /// The canary's instances.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub replicas: Option<i64>,
}

impl CanarySpec {
    /// The block's members, as [`CanarySpec::read`] reads them.
    pub const KEYS: [&str; 3] = ["image", "weight", "replicas"];
}

impl RegionStatus {
    /// The entry's view; `None` when it is no mapping.
    pub fn read(entry: &Value) -> Option<RegionStatus> {
        let entry = entry.as_object()?;
        let mut s = RegionStatus::default();
        for (key, value) in entry.str_entries() {
            let key = key.to_string_lossy();
            let known = match key.as_str() {
                "state" => set(&mut s.state, state(value)),
                "replicas_ready" => set(&mut s.replicas_ready, int(value)),
                "replicas_desired" => set(&mut s.replicas_desired, int(value)),
                "last_sync" => set(&mut s.last_sync, text(value)),
                "lifecycle_id" => set(&mut s.lifecycle_id, text(value)),
                "region_generation" => set(&mut s.region_generation, text(value)),
                "deletion_generation" => set(&mut s.deletion_generation, text(value)),
                "error" => set(&mut s.error, text(value)),
                "roles" => set(&mut s.roles, Roles::read(value)),
                "store" => set(&mut s.store, StoreStatus::read(value)),
                "canary" => set(&mut s.canary, CanaryStatus::read(value)),
                "absence_observations" => set(&mut s.absence_observations, int(value)),
                _ => false,
            };
            if !known {
                s.extra.insert(&key, value.clone());
            }
        }
        Some(s)
    }
}

impl Roles {
    fn read(value: &Value) -> Option<Roles> {
        let o = value.as_object()?;
        Some(Roles {
            prefill: o.get("prefill").and_then(RoleReplicas::read),
            decode: o.get("decode").and_then(RoleReplicas::read),
        })
    }
}

impl RoleReplicas {
    fn read(value: &Value) -> Option<RoleReplicas> {
        let o = value.as_object()?;
        Some(RoleReplicas {
            ready: o.get("ready").and_then(int),
            desired: o.get("desired").and_then(int),
        })
    }
}

impl StoreStatus {
    fn read(value: &Value) -> Option<StoreStatus> {
        let o = value.as_object()?;
        Some(StoreStatus {
            ready: match o.get("ready") {
                Some(Value::Bool(b)) => Some(*b),
                _ => None,
            },
            master: o.get("master").and_then(text),
        })
    }
}

impl CanaryStatus {
    fn read(value: &Value) -> Option<CanaryStatus> {
        let o = value.as_object()?;
        Some(CanaryStatus {
            state: o.get("state").and_then(state),
            image: o.get("image").and_then(text),
            weight: o.get("weight").and_then(int),
            replicas_ready: o.get("replicas_ready").and_then(int),
            replicas_desired: o.get("replicas_desired").and_then(int),
        })
    }
}

impl CanarySpec {
    /// The block's view; `None` when it is no mapping.
    pub fn read(value: &Value) -> Option<CanarySpec> {
        let o = value.as_object()?;
        let [image, weight, replicas] = CanarySpec::KEYS.map(|key| o.get(key));
        Some(CanarySpec {
            image: image.and_then(text),
            weight: weight.and_then(int),
            replicas: replicas.and_then(int),
        })
    }
}

/// Stores a read value; false when it had another shape.
fn set<T>(field: &mut Option<T>, value: Option<T>) -> bool {
    let read = value.is_some();
    *field = value;
    read
}

fn int(value: &Value) -> Option<i64> {
    value.as_int()?.as_i64()
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn state(value: &Value) -> Option<RegionState> {
    value.as_str().map(RegionState::parse)
}
