//! What only a region knows: the facts GCO's monitor takes from its own
//! environment rather than from the endpoint record (GCO_FACTS_NEWEST
//! section 4.4-4.8). Each has GCO's default where GCO has one; where it has
//! none the renderers say what the monitor does instead.

use crate::limits::{
    MOONCAKE_MASTER_METADATA_PORT, MOONCAKE_MASTER_NAME, MOONCAKE_MASTER_RPC_PORT,
};

/// The project name the monitor builds its SSM paths from when its
/// `PROJECT_NAME` env is unset.
pub const DEFAULT_PROJECT_NAME: &str = "gco";

/// The object-key prefix of cold-tier KV objects in the regional bucket.
pub const COLD_TIER_KEY_PREFIX: &str = "mooncake-kv";

/// One region's monitor settings. `None` means "not given": the monitor's
/// default applies, or, for the facts without one, the renderer says so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionContext {
    pub region: String,
    /// The EKS cluster (the monitor's `CLUSTER_NAME`); GCO has no default.
    pub cluster_name: Option<String>,
    /// The general-purpose regional bucket (SSM
    /// `/<project>/regional-shared-bucket/name`); GCO has no default.
    pub regional_bucket: Option<String>,
    /// `MOONCAKE_METADATA_SERVER`.
    pub metadata_server: Option<String>,
    /// `MOONCAKE_MASTER_ADDRESS`.
    pub master_address: Option<String>,
    /// `MOONCAKE_MASTER_IMAGE`; `store.master_image` wins over it.
    pub master_image: Option<String>,
    /// `PROJECT_NAME`.
    pub project_name: Option<String>,
}

impl RegionContext {
    /// A region whose monitor runs with no overrides.
    pub fn defaults(region: &str) -> RegionContext {
        RegionContext {
            region: region.to_owned(),
            ..RegionContext::default()
        }
    }

    /// The shared master's RPC address: `MOONCAKE_MASTER_ADDRESS`, else
    /// `mooncake-master:50051`.
    pub fn master_address(&self) -> String {
        given(&self.master_address).map_or_else(
            || format!("{MOONCAKE_MASTER_NAME}:{MOONCAKE_MASTER_RPC_PORT}"),
            str::to_owned,
        )
    }

    /// The metadata server: `MOONCAKE_METADATA_SERVER`, else the master's
    /// host on the metadata port (as read: the host is the master address
    /// without its port).
    pub fn metadata_server(&self) -> String {
        if let Some(server) = given(&self.metadata_server) {
            return server.to_owned();
        }
        let master = self.master_address();
        let host = master.rsplit_once(':').map_or(master.as_str(), |(h, _)| h);
        format!("http://{host}:{MOONCAKE_MASTER_METADATA_PORT}/metadata")
    }

    /// Whether `MOONCAKE_METADATA_SERVER` is given (else GCO's default).
    pub fn has_metadata_server(&self) -> bool {
        given(&self.metadata_server).is_some()
    }

    /// Whether `MOONCAKE_MASTER_ADDRESS` is given (else GCO's default).
    pub fn has_master_address(&self) -> bool {
        given(&self.master_address).is_some()
    }

    /// `MOONCAKE_MASTER_IMAGE`, when given.
    pub fn master_image(&self) -> Option<&str> {
        given(&self.master_image)
    }

    /// The EKS cluster name, when given.
    pub fn cluster_name(&self) -> Option<&str> {
        given(&self.cluster_name)
    }

    pub fn project_name(&self) -> &str {
        given(&self.project_name).unwrap_or(DEFAULT_PROJECT_NAME)
    }

    /// The SSM parameter the monitor reads the regional bucket's name from.
    pub fn bucket_parameter(&self) -> String {
        format!("/{}/regional-shared-bucket/name", self.project_name())
    }

    /// The cold tier's S3 URI for endpoint `name`, when the bucket is known.
    pub fn cold_tier_uri(&self, name: &str) -> Option<String> {
        given(&self.regional_bucket).map(|b| format!("s3://{b}/{COLD_TIER_KEY_PREFIX}/{name}/"))
    }
}

/// A setting counts as given when it is set and not blank, as the monitor's
/// `os.environ.get(...)` checks read it (as read: a blank env is unset).
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.trim().is_empty())
}
