//! `gco-console`: the endpoint API over the core, and the console's files.
//!
//! Layers, outermost first: [`app`] (HTTP: routes, limits, headers, auth),
//! [`service`] (deploy and change records with the core's rules and
//! optimistic concurrency), [`store`] (DynamoDB or embedded redb).

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod guard;
pub mod service;
pub mod store;
