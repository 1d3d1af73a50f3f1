//! The embedded store: one redb file, each record a JSON document keyed by
//! name. redb commits are durable (fsync) before they return, so an
//! acknowledged write survives a crash; one writer at a time makes the
//! conditional writes atomic.

use std::path::Path;
use std::sync::Arc;

use gco_spec::Record;
use gco_spec::json;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use super::{BoxFuture, Expected, MUTABLE_ATTRIBUTES, Store, StoreError, decode, storable};

const ENDPOINTS: TableDefinition<&str, &str> = TableDefinition::new("endpoints");

pub struct EmbeddedStore {
    db: Arc<Database>,
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

impl EmbeddedStore {
    /// Opens (or creates) `endpoints.redb` in `dir`.
    pub fn open(dir: &Path) -> Result<EmbeddedStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(unavailable)?;
        let db = Database::create(dir.join("endpoints.redb")).map_err(unavailable)?;
        let txn = db.begin_write().map_err(unavailable)?;
        txn.open_table(ENDPOINTS).map_err(unavailable)?;
        txn.commit().map_err(unavailable)?;
        Ok(EmbeddedStore { db: Arc::new(db) })
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Database) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let db = Arc::clone(&self.db);
        tokio::task::spawn_blocking(move || f(&db)).await.map_err(unavailable)?
    }
}

fn read_record(text: &str) -> Result<Record, StoreError> {
    decode(&json::parse(text).map_err(|e| StoreError::Corrupt(e.to_string()))?)
}

impl Store for EmbeddedStore {
    fn create<'a>(&'a self, record: &'a Record) -> BoxFuture<'a, Result<(), StoreError>> {
        let name = record.endpoint_name.clone();
        let text = storable(record).to_json();
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_write().map_err(unavailable)?;
            {
                let mut table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
                if table.get(name.as_str()).map_err(unavailable)?.is_some() {
                    return Err(StoreError::AlreadyExists);
                }
                table.insert(name.as_str(), text.as_str()).map_err(unavailable)?;
            }
            txn.commit().map_err(unavailable)
        }))
    }

    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        let name = name.to_owned();
        Box::pin(self.blocking(move |db| {
            let txn = db.begin_read().map_err(unavailable)?;
            let table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
            let found = table.get(name.as_str()).map_err(unavailable)?;
            found.map(|text| read_record(text.value())).transpose()
        }))
    }

    fn update<'a>(&'a self, record: &'a Record, expected: Expected<'a>) -> BoxFuture<'a, Result<(), StoreError>> {
        let name = record.endpoint_name.clone();
        let new = storable(record);
        let (updated_at, lifecycle_id, allow_deleted) =
            (expected.updated_at.to_owned(), expected.lifecycle_id.map(str::to_owned), expected.allow_deleted);
        Box::pin(self.blocking(move |db| {
            let expected = Expected { updated_at: &updated_at, lifecycle_id: lifecycle_id.as_deref(), allow_deleted };
            let txn = db.begin_write().map_err(unavailable)?;
            {
                let mut table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
                let current = match table.get(name.as_str()).map_err(unavailable)? {
                    Some(text) => json::parse(text.value()).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                    None => return Err(StoreError::ConditionFailed),
                };
                if !expected.holds_for(&decode(&current)?) {
                    return Err(StoreError::ConditionFailed);
                }
                let mut merged = current.as_object().cloned().unwrap_or_default();
                let new = new.as_object().expect("a record is an object");
                for attr in MUTABLE_ATTRIBUTES {
                    if let Some(v) = new.get(attr) {
                        merged.insert(attr, v.clone());
                    }
                }
                let text = json::Value::Object(merged).to_json();
                table.insert(name.as_str(), text.as_str()).map_err(unavailable)?;
            }
            txn.commit().map_err(unavailable)
        }))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Record>, StoreError>> {
        Box::pin(self.blocking(|db| {
            let txn = db.begin_read().map_err(unavailable)?;
            let table = txn.open_table(ENDPOINTS).map_err(unavailable)?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(unavailable)? {
                let (_, text) = entry.map_err(unavailable)?;
                out.push(read_record(text.value())?);
            }
            Ok(out)
        }))
    }
}
