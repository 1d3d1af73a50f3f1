//! A change with its history entry in one transaction, and reads of an
//! endpoint's entries.

use super::*;

/// How many times a transaction that another one got in the way of (or
/// whose entry id was taken) is tried before the change is reported as
/// lost to another writer.
pub(super) const TRANSACTION_ATTEMPTS: usize = 5;

impl DynamoStore {
    /// A create with its history entry: one TransactWriteItems, the record's
    /// put conditioned on its absence, the entry's on its id being new.
    pub(super) async fn create_recorded(
        &self,
        write: &Storable,
        by: &Author,
    ) -> Result<Arc<Stored>, StoreError> {
        self.history_ready().await?;
        let record = write.record();
        let answer = DynamoStore::as_read(write)?;
        let item = to_item(write.item());
        let answer_value = answer.to_value();
        let after = history::content(&answer_value);
        for _ in 0..TRANSACTION_ATTEMPTS {
            let entry = history::entry(by, &record.updated_at, None, Some(after.clone()));
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(item.clone()))
                .condition_expression("attribute_not_exists(endpoint_name)")
                .build()
                .map_err(|e| StoreError::Rejected(e.to_string()))?;
            let put = TransactWriteItem::builder().put(put).build();
            match self.transact(put, &record.endpoint_name, &entry).await {
                Ok(()) => return Ok(Arc::new(Stored::new(answer, answer_value.to_json()))),
                Err(Ok(Cancelled::Condition)) => return Err(StoreError::AlreadyExists),
                Err(Ok(Cancelled::Retry)) => transaction_pause().await,
                Err(Err(e)) => return Err(e),
            }
        }
        Err(StoreError::NotSaved(
            "other changes of the endpoint kept getting in the way; try again".into(),
        ))
    }

    /// An update with its history entry: one TransactWriteItems, the
    /// record's update carrying the condition a plain update has. It
    /// returns no item: the answer is the record read with the update's
    /// edits made, as a read of it returns it (the condition held, so
    /// nothing else changed the item in between).
    pub(super) async fn update_recorded(
        &self,
        record: &Record,
        expected: Expected<'_>,
        update: UpdateExpression,
        by: &Author,
    ) -> Result<Arc<Stored>, StoreError> {
        self.history_ready().await?;
        let (condition, names, values) = conditioned(&expected, &update);
        let before = expected.read.to_value();
        let mut item = before.as_object().cloned().unwrap_or_default();
        apply_edits(&mut item, &update.edits);
        let answer = read_item(
            &record.endpoint_name,
            &Value::Object(item).with_sorted_keys(),
        )
        .map_err(StoreError::Corrupt)?;
        let answer_value = answer.to_value();
        let (before, after) = (history::content(&before), history::content(&answer_value));
        for _ in 0..TRANSACTION_ATTEMPTS {
            let entry = history::entry(
                by,
                &record.updated_at,
                Some(before.clone()),
                Some(after.clone()),
            );
            let change = Update::builder()
                .table_name(&self.table)
                .key(
                    "endpoint_name",
                    AttributeValue::S(record.endpoint_name.clone()),
                )
                .update_expression(&update.text)
                .condition_expression(&condition)
                .set_expression_attribute_names(Some(names.clone()))
                .set_expression_attribute_values(Some(values.clone()))
                .build()
                .map_err(|e| StoreError::Rejected(e.to_string()))?;
            let change = TransactWriteItem::builder().update(change).build();
            match self.transact(change, &record.endpoint_name, &entry).await {
                Ok(()) => return Ok(Arc::new(Stored::new(answer, answer_value.to_json()))),
                // Another writer came first: the service reads again.
                Err(Ok(Cancelled::Condition)) => return Err(StoreError::ConditionFailed),
                Err(Ok(Cancelled::Retry)) => transaction_pause().await,
                Err(Err(e)) => return Err(e),
            }
        }
        Err(StoreError::ConditionFailed)
    }

    /// The record's write and the entry's put, as one transaction.
    /// `Err(Ok(_))`: cancelled by the record's condition, or worth another
    /// try; `Err(Err(_))`: failed, with what the service reports.
    pub(super) async fn transact(
        &self,
        record_write: TransactWriteItem,
        name: &str,
        entry: &HistoryEntry,
    ) -> Result<(), Result<Cancelled, StoreError>> {
        let history = self.history.as_ref().expect("history is recorded");
        let put = Put::builder()
            .table_name(&history.name)
            .set_item(Some(entry_item(name, entry)))
            .condition_expression("attribute_not_exists(change_id)")
            .build()
            .map_err(|e| Err(StoreError::Rejected(e.to_string())))?;
        let result = self
            .client
            .transact_write_items()
            .transact_items(record_write)
            .transact_items(TransactWriteItem::builder().put(put).build())
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await;
        let units: f64 = result.as_ref().map_or(0.0, |o| {
            o.consumed_capacity()
                .iter()
                .map(|c| c.capacity_units().unwrap_or(0.0))
                .sum()
        });
        crate::metrics::dynamodb_call("TransactWriteItems", result.is_ok(), 0.0, units);
        let e = match result {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        let detail = sdk_error_text(&e);
        match e.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                let codes: Vec<&str> = cancelled
                    .cancellation_reasons()
                    .iter()
                    .map(|r| r.code().unwrap_or("None"))
                    .collect();
                let code = |i: usize| codes.get(i).copied().unwrap_or("None");
                let throttled =
                    |c: &str| matches!(c, "ThrottlingError" | "ProvisionedThroughputExceeded");
                Err(match (code(0), code(1)) {
                    ("ConditionalCheckFailed", _) => Ok(Cancelled::Condition),
                    (_, "ConditionalCheckFailed") => Ok(Cancelled::Retry),
                    (a, b) if a == "TransactionConflict" || b == "TransactionConflict" => {
                        Ok(Cancelled::Retry)
                    }
                    (_, b) if throttled(b) => Err(StoreError::NotSaved(format!(
                        "the history table '{}' is throttled ({b}), so the change and its entry were not written; try again shortly",
                        history.name
                    ))),
                    (a, _) if throttled(a) => Err(StoreError::NotSaved(format!(
                        "the endpoints table '{}' is throttled ({a}), so the change and its entry were not written; try again shortly",
                        self.table
                    ))),
                    _ => Err(StoreError::Rejected(detail)),
                })
            }
            Some(
                TransactWriteItemsError::ThrottlingException(_)
                | TransactWriteItemsError::ProvisionedThroughputExceededException(_)
                | TransactWriteItemsError::RequestLimitExceeded(_),
            ) => {
                tracing::warn!(%detail, "TransactWriteItems throttled");
                Err(Err(StoreError::NotSaved(format!(
                    "DynamoDB throttled the write of the change and its history entry (tables '{}' and '{}'), so neither was written; try again shortly",
                    self.table, history.name
                ))))
            }
            Some(TransactWriteItemsError::ResourceNotFoundException(_)) => {
                // Which table? The history table is the one that comes and goes.
                match self.history_state().await {
                    Ok(HistoryState::Missing(name)) => Err(Err(missing_history(&name))),
                    _ => Err(Err(StoreError::Rejected(detail))),
                }
            }
            _ => Err(Err(failure(e))),
        }
    }

    /// The entries of `name` in `span`, at most `limit`, page by page (a
    /// page holds at most 1 MB, fewer entries than asked for when they are
    /// large).
    pub(super) async fn query_history(
        &self,
        name: &str,
        span: Span<'_>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let Some(history) = &self.history else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut start: Option<HashMap<String, AttributeValue>> = None;
        while out.len() < limit {
            let mut request = self
                .client
                .query()
                .table_name(&history.name)
                .consistent_read(true)
                .expression_attribute_values(":name", AttributeValue::S(name.to_owned()))
                .limit(i32::try_from(limit - out.len()).unwrap_or(i32::MAX))
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .set_exclusive_start_key(start.take());
            request = match span {
                Span::Older(None) => request
                    .key_condition_expression("endpoint_name = :name")
                    .scan_index_forward(false),
                Span::Older(Some(before)) => request
                    .key_condition_expression("endpoint_name = :name AND change_id < :id")
                    .expression_attribute_values(":id", AttributeValue::S(before.to_owned()))
                    .scan_index_forward(false),
                Span::From(from) => request
                    .key_condition_expression("endpoint_name = :name AND change_id >= :id")
                    .expression_attribute_values(":id", AttributeValue::S(from.to_owned()))
                    .scan_index_forward(true),
            };
            let page = request.send().await;
            let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
            crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
            let page = match page {
                Ok(page) => page,
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_resource_not_found_exception()) =>
                {
                    history.missing.store(true, Ordering::SeqCst);
                    return Err(StoreError::NotSaved(format!(
                        "the history table '{}' does not exist",
                        history.name
                    )));
                }
                Err(e) => return Err(failure(e)),
            };
            for item in page.items() {
                out.push(read_entry(item).ok_or_else(|| {
                    StoreError::Unavailable(format!(
                        "an item of the history table {} is no entry: {item:?}",
                        history.name
                    ))
                })?);
            }
            match page.last_evaluated_key() {
                Some(key) if !key.is_empty() => start = Some(key.clone()),
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// A short random pause before a transaction is tried again.
pub(super) async fn transaction_pause() {
    crate::clock::pause(Duration::from_millis(1), Duration::from_millis(20)).await;
}

/// An entry as the history table keeps it: the content as JSON text (a
/// record's own maps, exactly, whatever their keys), the rest as strings.
pub(super) fn entry_item(name: &str, entry: &HistoryEntry) -> HashMap<String, AttributeValue> {
    let mut item = HashMap::from([
        (
            "endpoint_name".to_owned(),
            AttributeValue::S(name.to_owned()),
        ),
        ("change_id".to_owned(), AttributeValue::S(entry.id.clone())),
        ("at".to_owned(), AttributeValue::S(entry.at.clone())),
        (
            "operation".to_owned(),
            AttributeValue::S(entry.operation.clone()),
        ),
    ]);
    let mut text = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            item.insert(key.to_owned(), AttributeValue::S(value));
        }
    };
    text("since", entry.since.clone());
    text("who", entry.who.clone());
    text("request_id", entry.request_id.clone());
    text("client_request_id", entry.client_request_id.clone());
    text("before", entry.before.as_ref().map(Value::to_json));
    text("after", entry.after.as_ref().map(Value::to_json));
    item
}

/// An entry read back from [`entry_item`]'s item.
pub(super) fn read_entry(item: &HashMap<String, AttributeValue>) -> Option<HistoryEntry> {
    let text = |key: &str| item.get(key).and_then(|v| v.as_s().ok()).cloned();
    let content = |key: &str| -> Option<Option<Value>> {
        match text(key) {
            None => Some(None),
            Some(json) => gco_spec::json::parse(&json).ok().map(Some),
        }
    };
    Some(HistoryEntry {
        id: text("change_id")?,
        at: text("at")?,
        since: text("since"),
        who: text("who"),
        operation: text("operation")?,
        request_id: text("request_id"),
        client_request_id: text("client_request_id"),
        before: content("before")?,
        after: content("after")?,
    })
}
