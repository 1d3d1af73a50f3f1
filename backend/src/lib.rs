//! `gco-console`: the endpoint API over the core, and the console's files.
//!
//! Layers, outermost first: [`server`] (connections: HTTP/1.1 with
//! timeouts and a cap), [`app`] (HTTP: routes, limits, headers, auth),
//! [`service`] (deploy and change records with the core's rules and
//! optimistic concurrency; [`version`] makes the `ETag`s), [`store`]
//! (DynamoDB or embedded redb; `store::listing` orders and pages the list).

pub mod api;
pub mod app;
pub mod audit;
pub mod auth;
pub mod clock;
pub mod config;
pub mod console_files;
pub mod emf;
pub mod error;
pub mod guard;
pub mod metrics;
pub mod monitor_settings;
pub mod server;
pub mod service;
pub mod store;
pub mod version;
