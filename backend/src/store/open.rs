//! The store `Config` names, opened and checked as the console starts:
//! DynamoDB (`--dynamodb-region`), with its view of the table unless
//! `--refresh-interval 0`, else the embedded store in `--data-dir`.

use std::sync::Arc;

use super::{DynamoConfig, DynamoStore, EmbeddedStore, HistoryState, SignOuts, Store, ViewedStore};
use crate::config::Config;

/// An opened store, and where it keeps sign-outs (`--auth oidc`) when it
/// has a place for them.
pub struct Opened {
    pub store: Arc<dyn Store>,
    pub sign_outs: Option<Arc<dyn SignOuts>>,
}

/// Opens the store `config` names, saying in the log what it found: a
/// missing table or history table is logged, not refused (requests answer
/// 503 until it exists); a store that cannot be opened is an error.
pub async fn open(config: &Config) -> Result<Opened, String> {
    let sign_outs: Option<Arc<dyn SignOuts>>;
    let store: Arc<dyn Store> = match config.dynamodb_region() {
        Some(region) => {
            let cfg = DynamoConfig {
                table: config.dynamodb_table.clone(),
                region,
                endpoint: config.dynamodb_endpoint.clone(),
                history_table: config.history_table(),
            };
            let store = DynamoStore::connect(&cfg).await;
            if config.create_table {
                store
                    .create_table()
                    .await
                    .map_err(|e| format!("creating table {}: {e}", cfg.table))?;
            }
            tracing::info!(table = %cfg.table, region = %cfg.region, endpoint = ?cfg.endpoint, "using DynamoDB");
            match store.table_exists().await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::error!(table = %cfg.table, "the endpoints table does not exist: every request will fail (503) until it does (--create-table creates it)")
                }
                Err(e) => tracing::error!(
                    table = %cfg.table,
                    "could not tell whether the endpoints table exists: {e}"
                ),
            }
            match store.history_state().await {
                Ok(HistoryState::Off) => {}
                Ok(HistoryState::Present(table)) => {
                    tracing::info!(%table, "every change is recorded in the history table");
                }
                Ok(HistoryState::Missing(table)) => tracing::error!(
                    %table,
                    "the history table does not exist: changes are refused (503) until it does; reads work (create it, pass --create-table, or --history-table off)"
                ),
                Err(e) => tracing::error!(
                    "could not tell whether the history table exists (changes will tell): {e}"
                ),
            }
            let store = Arc::new(store);
            sign_outs = store
                .keeps_sign_outs()
                .then(|| Arc::clone(&store) as Arc<dyn SignOuts>);
            let store: Arc<dyn Store> = store;
            if config.refresh_interval.is_zero() {
                tracing::info!("no view of the table: every list reads it whole");
                store
            } else {
                tracing::info!(interval = ?config.refresh_interval, "lists come from one view of the table, read again while someone looks");
                Arc::new(ViewedStore::new(store, config.refresh_interval))
            }
        }
        None => {
            let history = config.history_table().is_some();
            let store = EmbeddedStore::open_with(&config.data_dir, history)
                .map_err(|e| format!("{}: {e}", config.data_dir.display()))?;
            tracing::info!(dir = %config.data_dir.display(), "using the embedded store");
            if history {
                tracing::info!("every change is recorded in the store's history");
            }
            let store = Arc::new(store);
            sign_outs = Some(Arc::clone(&store) as Arc<dyn SignOuts>);
            store
        }
    };
    Ok(Opened { store, sign_outs })
}
