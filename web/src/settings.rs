//! The server's settings (`GET /api/config`: its deployed regions, the
//! default image and the frameworks its GCO accepts; `GET
//! /api/monitor-settings`), asked for once per page load and shared by
//! every page through context.

use gco_api::AuthMode;
use gco_spec::Frameworks;
use gco_spec::limits::DEFAULT_MOONCAKE_IMAGE;
use leptos::prelude::*;

/// The server's deploy defaults, once known.
#[derive(Clone, Debug, PartialEq)]
pub struct Defaults {
    /// Where a request without target regions deploys.
    pub regions: Vec<String>,
    /// The image a mooncake request without one gets.
    pub image: String,
    pub frameworks: Frameworks,
    /// What each region's monitor is configured with
    /// (`GET /api/monitor-settings`): a region left without a master image
    /// is warned about, as the server's check does.
    pub monitors: Option<gco_spec::MonitorSettings>,
    /// How the server knows who is asking (its `--auth`).
    pub auth: AuthMode,
    /// Whether the server records every change (false with
    /// `--history-table off`).
    pub history: bool,
}

/// The answer, and what the pages read of it.
#[derive(Clone, Copy)]
pub struct Settings {
    defaults: LocalResource<Option<Defaults>>,
    /// The frameworks the team's GCO accepts: GCO's current ones until the
    /// server says (or when it cannot be asked).
    pub frameworks: Memo<Frameworks>,
    /// The server's `--auth`, once known.
    pub auth: Memo<Option<AuthMode>>,
    /// The server said it records no history.
    pub unrecorded: Memo<bool>,
}

impl Settings {
    /// Asks the server; for the app's root, which provides it.
    pub fn load() -> Settings {
        // Asked again once the user gives an identity: the monitors'
        // settings need one in every mode but `none`.
        let defaults = LocalResource::new(|| {
            crate::auth::epoch();
            load()
        });
        let frameworks = Memo::new(move |_| {
            defaults.with(|d| {
                d.as_ref()
                    .and_then(Option::as_ref)
                    .map_or(Frameworks::CURRENT, |d| d.frameworks)
            })
        });
        let auth = Memo::new(move |_| defaults.with(|d| d.as_ref()?.as_ref().map(|d| d.auth)));
        let unrecorded = Memo::new(move |_| {
            defaults.with(|d| {
                d.as_ref()
                    .and_then(Option::as_ref)
                    .is_some_and(|d| !d.history)
            })
        });
        Settings {
            defaults,
            frameworks,
            auth,
            unrecorded,
        }
    }

    /// The settings the app's root provides.
    pub fn get() -> Settings {
        expect_context::<Settings>()
    }

    /// Reads the defaults: `None` until they arrive (or without a usable
    /// answer), when a check assumes no deployed regions.
    pub fn with_defaults<R>(&self, f: impl FnOnce(Option<&Defaults>) -> R) -> R {
        self.defaults
            .with(|d| f(d.as_ref().and_then(Option::as_ref)))
    }

    pub fn default_image(d: Option<&Defaults>) -> &str {
        d.map_or(DEFAULT_MOONCAKE_IMAGE, |d| d.image.as_str())
    }
}

/// `GET /api/config` typed by `gco_api::Config` (and the monitors'
/// settings), or `None` without a usable answer.
async fn load() -> Option<Defaults> {
    let reply = crate::api::get(gco_api::route::CONFIG).await.ok()?;
    let config = gco_api::Config::from_value(&reply.body).ok()?;
    let monitors = crate::api::get(gco_api::route::MONITOR_SETTINGS)
        .await
        .ok()
        .and_then(|r| gco_spec::MonitorSettings::from_value(&r.body).ok());
    Some(Defaults {
        monitors,
        frameworks: config.frameworks().ok()?,
        regions: config.deployed_regions,
        image: config.default_image,
        auth: config.auth,
        history: config.history,
    })
}
