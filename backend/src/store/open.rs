//! The store the console's flags name (`Config::store_location`), opened
//! and checked as the console starts: DynamoDB (`--dynamodb-region`), with
//! its view of the table unless `--refresh-interval 0`, else the embedded
//! store in `--data-dir`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{DynamoConfig, DynamoStore, EmbeddedStore, HistoryState, SignOuts, Store, ViewedStore};

/// Where the endpoints are kept, and how.
pub enum Location {
    Dynamo {
        table: DynamoConfig,
        /// Create the tables when they are missing (`--create-table`).
        create_table: bool,
        /// How often the view reads the table again; zero: no view.
        refresh_interval: Duration,
    },
    Embedded {
        data_dir: PathBuf,
        /// Whether changes are recorded (`--history-table` not `off`).
        history: bool,
    },
}

/// An opened store, and where it keeps sign-outs (`--auth oidc`) when it
/// has a place for them.
pub struct Opened {
    pub store: Arc<dyn Store>,
    pub sign_outs: Option<Arc<dyn SignOuts>>,
}

/// Opens the store at `location`, saying in the log what it found: a
/// missing table or history table is logged, not refused (requests answer
/// 503 until it exists); a store that cannot be opened is an error.
pub async fn open(location: &Location) -> Result<Opened, String> {
    let sign_outs: Option<Arc<dyn SignOuts>>;
    let store: Arc<dyn Store> = match location {
        Location::Dynamo {
            table: cfg,
            create_table,
            refresh_interval,
        } => {
            let store = DynamoStore::connect(cfg).await;
            if *create_table {
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
            if refresh_interval.is_zero() {
                tracing::info!("no view of the table: every list reads it whole");
                store
            } else {
                tracing::info!(interval = ?refresh_interval, "lists come from one view of the table, read again while someone looks");
                Arc::new(ViewedStore::new(store, *refresh_interval))
            }
        }
        Location::Embedded { data_dir, history } => {
            let store = EmbeddedStore::open_with(data_dir, *history)
                .map_err(|e| format!("{}: {e}", data_dir.display()))?;
            tracing::info!(dir = %data_dir.display(), "using the embedded store");
            if *history {
                tracing::info!("every change is recorded in the store's history");
            }
            let store = Arc::new(store);
            sign_outs = Some(Arc::clone(&store) as Arc<dyn SignOuts>);
            store
        }
    };
    Ok(Opened { store, sign_outs })
}
