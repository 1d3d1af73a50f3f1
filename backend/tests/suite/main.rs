//! The backend's integration tests, as one test binary: each linked
//! binary carries the whole backend and its AWS SDK, so one binary instead
//! of one per file keeps the build's disk and link time down (see
//! `common` for the fixtures they share).

mod common;

mod api_access;
mod api_changes;
mod api_deploy;
mod api_limits;
mod api_listing;
mod api_serving;
mod audit;
mod connections;
mod editor_parity;
mod faults;
mod frameworks;
mod history;
mod history_faults;
mod hostile;
mod hostile_probe;
mod iam_policy;
mod identity;
mod manifests;
mod openapi;
mod operations;
mod process;
mod store_conformance;
mod versions;
mod view;
