//! Creating and checking the tables: the endpoints table, the history
//! table with its audit index, and the sign-outs' expiry.

use super::*;

impl DynamoStore {
    /// Creates the table (key `endpoint_name`, on-demand) unless it exists,
    /// and the history table (key `endpoint_name` + `change_id`) when
    /// history is recorded.
    pub async fn create_table(&self) -> Result<(), StoreError> {
        self.create_one(&self.table, &[("endpoint_name", KeyType::Hash)])
            .await?;
        if let Some(history) = &self.history {
            let key = [
                ("endpoint_name", KeyType::Hash),
                ("change_id", KeyType::Range),
            ];
            self.create_one(&history.name, &key).await?;
            self.add_audit_index(&history.name).await?;
            history.missing.store(false, Ordering::SeqCst);
            self.expire_sign_outs(&history.name).await;
        }
        Ok(())
    }

    /// Creates `table` with string keys `key`, on-demand, unless it exists.
    pub(super) async fn create_one(
        &self,
        table: &str,
        key: &[(&str, KeyType)],
    ) -> Result<(), StoreError> {
        let built = key
            .iter()
            .map(|(name, kind)| {
                Ok::<_, aws_sdk_dynamodb::error::BuildError>((
                    AttributeDefinition::builder()
                        .attribute_name(*name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()?,
                    KeySchemaElement::builder()
                        .attribute_name(*name)
                        .key_type(kind.clone())
                        .build()?,
                ))
            })
            .collect::<Result<Vec<_>, _>>();
        let (attrs, keys): (Vec<_>, Vec<_>) = built
            .map_err(|e| StoreError::Unavailable(e.to_string()))?
            .into_iter()
            .unzip();
        // The history table is made with the audit view's index at once.
        let (attrs, index) = if key.len() == 2 {
            audit_index_definition(attrs).map_err(|e| StoreError::Unavailable(e.to_string()))?
        } else {
            (attrs, None)
        };
        let result = self
            .client
            .create_table()
            .table_name(table)
            .set_attribute_definitions(Some(attrs))
            .set_key_schema(Some(keys))
            .set_global_secondary_indexes(index.map(|i| vec![i]))
            .billing_mode(BillingMode::PayPerRequest)
            .send()
            .await;
        match result {
            Ok(_) => {}
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_in_use_exception()) => {}
            Err(e) => return Err(failure(e)),
        }
        self.wait_until_active(table).await
    }

    /// The audit view's index on the history table ([`AUDIT_INDEX`]),
    /// added to a table made before it, and waited for until active (
    /// DynamoDB fills it from the entries there).
    pub(super) async fn add_audit_index(&self, table: &str) -> Result<(), StoreError> {
        let described = self
            .client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(failure)?;
        if described.table().and_then(audit_index_state).is_none() {
            let built = (|| {
                let attr = |name: &str| {
                    AttributeDefinition::builder()
                        .attribute_name(name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()
                };
                let index = CreateGlobalSecondaryIndexAction::builder()
                    .index_name(AUDIT_INDEX)
                    .set_key_schema(Some(audit_index_key()?))
                    .projection(audit_projection())
                    .build()?;
                Ok::<_, aws_sdk_dynamodb::error::BuildError>((
                    vec![attr("operation")?, attr("change_id")?],
                    GlobalSecondaryIndexUpdate::builder().create(index).build(),
                ))
            })();
            let (attrs, update) = built.map_err(|e| StoreError::Unavailable(e.to_string()))?;
            self.client
                .update_table()
                .table_name(table)
                .set_attribute_definitions(Some(attrs))
                .global_secondary_index_updates(update)
                .send()
                .await
                .map_err(failure)?;
        }
        // DynamoDB fills a new index from the table: minutes when large.
        self.wait_until(table, 3000, |t| audit_index_state(t) == Some(true))
            .await
    }

    /// Turns on the history table's TTL on the sign-outs' expiry, so
    /// DynamoDB deletes them once their session is over (history entries
    /// have no such attribute). A server without TTL (dynalite) is told
    /// about in the log: reads leave expired sign-outs out anyway.
    pub(super) async fn expire_sign_outs(&self, table: &str) {
        let spec = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(sign_outs::DYNAMODB_TTL_ATTRIBUTE)
            .build();
        let result = match spec {
            Ok(spec) => self
                .client
                .update_time_to_live()
                .table_name(table)
                .time_to_live_specification(spec)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| sdk_error_text(&e)),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = result {
            // Already on is no failure.
            if !e.contains("already enabled") {
                tracing::warn!(table, error = %e, "could not turn on the TTL of sign-outs");
            }
        }
    }

    /// Whether sign-outs can be kept ([`SignOuts`]): in the history table,
    /// so not with `--history-table off`.
    pub fn keeps_sign_outs(&self) -> bool {
        self.history.is_some()
    }

    /// A new table takes writes only once it is ACTIVE.
    pub(super) async fn wait_until_active(&self, table: &str) -> Result<(), StoreError> {
        self.wait_until(table, 300, |t| {
            t.table_status() == Some(&TableStatus::Active)
        })
        .await
    }

    /// Asks DescribeTable every 100 ms, at most `tries` times, until
    /// `ready` holds of the table.
    pub(super) async fn wait_until(
        &self,
        table: &str,
        tries: u32,
        ready: impl Fn(&aws_sdk_dynamodb::types::TableDescription) -> bool,
    ) -> Result<(), StoreError> {
        for _ in 0..tries {
            let out = self
                .client
                .describe_table()
                .table_name(table)
                .send()
                .await
                .map_err(failure)?;
            if out.table().is_some_and(&ready) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {table} was not ready within {} s",
            tries / 10
        )))
    }

    /// Whether the endpoints table is there (DescribeTable), for the
    /// console to say at start-up.
    pub async fn table_exists(&self) -> Result<bool, StoreError> {
        let out = self
            .client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await;
        crate::metrics::dynamodb_call("DescribeTable", out.is_ok(), 0.0, 0.0);
        match out {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(with_advice(e)),
        }
    }

    /// Whether the history table is there (DescribeTable): the console
    /// says so at start-up, and refuses changes while it is missing.
    pub async fn history_state(&self) -> Result<HistoryState, StoreError> {
        let Some(history) = &self.history else {
            return Ok(HistoryState::Off);
        };
        let out = self
            .client
            .describe_table()
            .table_name(&history.name)
            .send()
            .await;
        crate::metrics::dynamodb_call("DescribeTable", out.is_ok(), 0.0, 0.0);
        match out {
            Ok(out) => {
                history.missing.store(false, Ordering::SeqCst);
                if out.table().and_then(audit_index_state).is_none() {
                    tracing::warn!(
                        table = %history.name,
                        "the history table has no index {AUDIT_INDEX}: the audit view (/history) answers 503 until it does; --create-table adds it, or the CDK stack, or: aws dynamodb update-table --table-name {} --attribute-definitions AttributeName=operation,AttributeType=S AttributeName=change_id,AttributeType=S --global-secondary-index-updates '[{{\"Create\": {{\"IndexName\": \"{AUDIT_INDEX}\", \"KeySchema\": [{{\"AttributeName\": \"operation\", \"KeyType\": \"HASH\"}}, {{\"AttributeName\": \"change_id\", \"KeyType\": \"RANGE\"}}], \"Projection\": {{\"ProjectionType\": \"INCLUDE\", \"NonKeyAttributes\": [\"at\", \"who\", \"request_id\", \"client_request_id\"]}}}}}}]'",
                        history.name
                    );
                }
                Ok(HistoryState::Present(history.name.clone()))
            }
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                history.missing.store(true, Ordering::SeqCst);
                Ok(HistoryState::Missing(history.name.clone()))
            }
            Err(e) => Err(with_advice(e)),
        }
    }

    /// Before a change: refused while the history table is missing (looked
    /// at again each time, so changes resume once it is created).
    pub(super) async fn history_ready(&self) -> Result<(), StoreError> {
        let Some(history) = &self.history else {
            return Ok(());
        };
        if !history.missing.load(Ordering::SeqCst) {
            return Ok(());
        }
        match self.history_state().await? {
            HistoryState::Missing(name) => Err(missing_history(&name)),
            _ => Ok(()),
        }
    }
}

/// The reason a change is refused while the history table is missing.
pub(super) fn missing_history(name: &str) -> StoreError {
    StoreError::NotSaved(format!(
        "the history table '{name}' does not exist, and every change is recorded there: create it (--create-table creates it) or run the console with --history-table off"
    ))
}

/// The audit index of a table: `None` when it has none, else whether it
/// is active (a server that gives no status has it active).
pub(super) fn audit_index_state(t: &aws_sdk_dynamodb::types::TableDescription) -> Option<bool> {
    t.global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some(AUDIT_INDEX))
        .map(|i| i.index_status().is_none_or(|s| *s == IndexStatus::Active))
}

/// The audit index's projection: its keys, the table's, and
/// [`AUDIT_INDEX_ATTRIBUTES`].
pub(super) fn audit_projection() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::Include)
        .set_non_key_attributes(Some(AUDIT_INDEX_ATTRIBUTES.map(str::to_owned).to_vec()))
        .build()
}

/// A new history table's attribute definitions with `operation`, and its
/// audit index.
pub(super) fn audit_index_definition(
    mut attrs: Vec<AttributeDefinition>,
) -> Result<
    (Vec<AttributeDefinition>, Option<GlobalSecondaryIndex>),
    aws_sdk_dynamodb::error::BuildError,
> {
    attrs.push(
        AttributeDefinition::builder()
            .attribute_name("operation")
            .attribute_type(ScalarAttributeType::S)
            .build()?,
    );
    let index = GlobalSecondaryIndex::builder()
        .index_name(AUDIT_INDEX)
        .set_key_schema(Some(audit_index_key()?))
        .projection(audit_projection())
        .build()?;
    Ok((attrs, Some(index)))
}

/// The audit index's key: `operation`, then `change_id`.
pub(super) fn audit_index_key() -> Result<Vec<KeySchemaElement>, aws_sdk_dynamodb::error::BuildError>
{
    [("operation", KeyType::Hash), ("change_id", KeyType::Range)]
        .into_iter()
        .map(|(name, kind)| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
                .build()
        })
        .collect()
}
