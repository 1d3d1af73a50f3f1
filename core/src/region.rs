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

/// Declares the monitor settings once: [`RegionContext`]'s fields (the
/// `manifests` command's flags and the API's `MonitorSettingsTable`),
/// [`MONITOR_SETTINGS_KEYS`], and [`RegionContext::settings`], which walks
/// them in that order for everything else (the settings file, the API's
/// bodies, the merges).
macro_rules! monitor_settings {
    ($($(#[$attr:meta])* $key:ident,)+) => {
        /// One region's monitor settings. One not given (absent, or blank)
        /// leaves the monitor's default, or, for the facts without one,
        /// the renderers say what the monitor does instead.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[cfg_attr(feature = "openapi", schema(as = MonitorSettingsTable))]
        pub struct RegionContext {
            /// The AWS region the monitor runs in.
            #[cfg_attr(feature = "cli", arg(long))]
            #[cfg_attr(feature = "openapi", schema(ignore))]
            pub region: String,
            $(
                $(#[$attr])*
                #[cfg_attr(feature = "cli", arg(long))]
                pub $key: Option<String>,
            )+
        }

        /// The settings keys of one region's monitor, as the `manifests`
        /// command's flags name them (`--master-image` is `master_image`).
        pub const MONITOR_SETTINGS_KEYS: [&str; [$(stringify!($key)),+].len()] =
            [$(stringify!($key)),+];

        impl RegionContext {
            /// The settings, in [`MONITOR_SETTINGS_KEYS`]' order.
            pub fn settings(&self) -> [&Option<String>; MONITOR_SETTINGS_KEYS.len()] {
                [$(&self.$key),+]
            }

            /// The settings to fill, in [`MONITOR_SETTINGS_KEYS`]' order.
            pub fn settings_mut(&mut self) -> [&mut Option<String>; MONITOR_SETTINGS_KEYS.len()] {
                [$(&mut self.$key),+]
            }

            /// The setting named `key`, when it is one.
            fn setting_mut(&mut self, key: &str) -> Option<&mut Option<String>> {
                // A `match`, not a search of the keys: the npm package is
                // smaller so.
                match key {
                    $(stringify!($key) => Some(&mut self.$key),)+
                    _ => None,
                }
            }

            /// Region `region`'s settings, each what `pick` makes of the
            /// field it is handed.
            fn picked(
                region: &str,
                pick: impl Fn(fn(&RegionContext) -> &Option<String>) -> Option<String>,
            ) -> RegionContext {
                RegionContext {
                    region: region.to_owned(),
                    $($key: pick(|c| &c.$key),)+
                }
            }
        }
    };
}

monitor_settings! {
    /// The EKS cluster (the monitor's `CLUSTER_NAME`); GCO has no default.
    cluster_name,
    /// The general-purpose regional bucket (SSM
    /// `/<project>/regional-shared-bucket/name`); GCO has no default.
    regional_bucket,
    /// `MOONCAKE_METADATA_SERVER`.
    metadata_server,
    /// `MOONCAKE_MASTER_ADDRESS`.
    master_address,
    /// `MOONCAKE_MASTER_IMAGE`; `store.master_image` wins over it.
    #[cfg_attr(feature = "openapi", schema(examples("mooncake/master:0.3.6")))]
    master_image,
    /// `PROJECT_NAME`.
    project_name,
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

/// What each region's monitor is configured with, as the console is told
/// (its `--monitor-settings` file): a `default` table and a table per
/// region, a region's keys over the default's. GCO's monitors take these
/// from their own environment; the console only mirrors them for its
/// preview and its warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorSettings {
    pub default: RegionContext,
    /// Per region, its own settings (over the default's).
    #[cfg_attr(feature = "openapi", schema(value_type = std::collections::BTreeMap<String, RegionContext>))]
    pub regions: Vec<RegionContext>,
}

impl MonitorSettings {
    /// Reads `{"default": {...}, "regions": {"us-east-1": {...}}}`; an
    /// unknown key, a region name that is none, or a value that is not a
    /// string is refused at its path.
    pub fn from_value(value: &crate::json::Value) -> Result<MonitorSettings, crate::Diagnostic> {
        use crate::Diagnostic;
        use crate::json::Value;
        let table = |v: &Value, path: &str| -> Result<RegionContext, Diagnostic> {
            let Some(o) = v.as_object() else {
                return Err(Diagnostic::error(path, format!("{path} must be a table")));
            };
            let mut ctx = RegionContext::default();
            for (key, value) in o.iter() {
                let key = key.as_str().unwrap_or_default();
                let at = format!("{path}.{key}");
                let Some(text) = value.as_str() else {
                    return Err(Diagnostic::error(
                        at.clone(),
                        format!("{at} must be a string, got {}", value.repr()),
                    ));
                };
                let Some(slot) = ctx.setting_mut(key) else {
                    return Err(Diagnostic::error(
                        at.clone(),
                        format!(
                            "unknown monitor setting {at}; the settings are {}",
                            MONITOR_SETTINGS_KEYS.join(", ")
                        ),
                    ));
                };
                *slot = Some(text.to_owned());
            }
            Ok(ctx)
        };
        let Some(top) = value.as_object() else {
            return Err(Diagnostic::error(
                "",
                "the monitor settings must be a table",
            ));
        };
        let mut settings = MonitorSettings::default();
        for (key, v) in top.iter() {
            match key.as_str().unwrap_or_default() {
                "default" => settings.default = table(v, "default")?,
                "regions" => {
                    let Some(regions) = v.as_object() else {
                        return Err(Diagnostic::error(
                            "regions",
                            "regions must be a table of regions",
                        ));
                    };
                    for (name, region) in regions.iter() {
                        let name = name.as_str().unwrap_or_default();
                        let path = format!("regions.{name}");
                        if !crate::names::is_region(name) {
                            return Err(Diagnostic::error(
                                path.clone(),
                                format!(
                                    "{path}: {} is not an AWS region such as 'us-east-1'",
                                    crate::pyrepr::repr_text(name)
                                ),
                            ));
                        }
                        let mut ctx = table(region, &path)?;
                        ctx.region = name.to_owned();
                        settings.regions.push(ctx);
                    }
                }
                other => {
                    return Err(Diagnostic::error(
                        other,
                        format!(
                            "unknown table {}; the settings have [default] and [regions.<name>]",
                            crate::pyrepr::repr_text(other)
                        ),
                    ));
                }
            }
        }
        Ok(settings)
    }

    /// The settings as [`MonitorSettings::from_value`] reads them.
    pub fn to_value(&self) -> crate::json::Value {
        use crate::json::{Object, Value};
        let table = |c: &RegionContext| {
            let mut o = Object::new();
            for (key, value) in MONITOR_SETTINGS_KEYS.iter().zip(c.settings()) {
                if let Some(v) = value {
                    o.insert(key, v.as_str());
                }
            }
            Value::Object(o)
        };
        let mut regions = Object::new();
        for r in &self.regions {
            regions.insert(&r.region, table(r));
        }
        let mut o = Object::new();
        o.insert("default", table(&self.default));
        o.insert("regions", Value::Object(regions));
        Value::Object(o)
    }

    /// Region `region`'s monitor: its own keys, else the default's.
    pub fn context(&self, region: &str) -> RegionContext {
        let own = self.regions.iter().find(|r| r.region == region);
        RegionContext::picked(region, |field| {
            own.and_then(|o| given(field(o)))
                .or_else(|| given(field(&self.default)))
                .map(str::to_owned)
        })
    }
}

impl RegionContext {
    /// `self` with each setting `over` gives in place of its own.
    pub fn overridden_by(mut self, over: &RegionContext) -> RegionContext {
        for (mine, theirs) in self.settings_mut().into_iter().zip(over.settings()) {
            if theirs.is_some() {
                *mine = theirs.clone();
            }
        }
        self
    }
}
