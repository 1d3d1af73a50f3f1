//! Records: the update's condition, the scans of the table and the
//! conditional puts.

use super::*;

/// The condition every update carries (the record as read: same version,
/// same lifecycle, not deleted unless deleting), with the expression's
/// names and values and the condition's own.
pub(super) fn conditioned(
    expected: &Expected<'_>,
    update: &UpdateExpression,
) -> (
    String,
    HashMap<String, String>,
    HashMap<String, AttributeValue>,
) {
    let (names, mut values) = (update.names.clone(), update.values.clone());
    let read = expected.read;
    // A record read without `updated_at` (an older writer's) is read as
    // "": the condition admits either.
    let mut condition = if read.updated_at.is_empty() {
        "attribute_exists(endpoint_name) AND (attribute_not_exists(updated_at) OR updated_at = :expected_at)"
    } else {
        "attribute_exists(endpoint_name) AND updated_at = :expected_at"
    }
    .to_owned();
    values.insert(
        ":expected_at".into(),
        AttributeValue::S(read.updated_at.clone()),
    );
    match &read.lifecycle_id {
        Some(id) => {
            condition.push_str(" AND lifecycle_id = :lifecycle");
            values.insert(":lifecycle".into(), AttributeValue::S(id.clone()));
        }
        None => condition.push_str(" AND attribute_not_exists(lifecycle_id)"),
    }
    if !expected.allow_deleted {
        condition.push_str(" AND desired_state <> :deleted");
        values.insert(
            ":deleted".into(),
            AttributeValue::S(DesiredState::Deleted.as_str().into()),
        );
    }
    (condition, names, values)
}

impl DynamoStore {
    /// The record as a read of the item it puts returns it: the stored
    /// form, with the keys of every map sorted, as [`from_item`] gives
    /// them. The attributes come back in the record's own order
    /// (`read_item`).
    pub(super) fn as_read(write: &Storable) -> Result<Record, StoreError> {
        let mut out = gco_spec::json::Object::new();
        for (name, attribute) in write.item().str_entries() {
            out.insert(&name.to_string_lossy(), attribute.with_sorted_keys());
        }
        read_item(&write.record().endpoint_name, &gco_spec::Value::Object(out))
            .map_err(StoreError::Corrupt)
    }

    /// Every item, in as many parallel segments as the table's size at the
    /// last scan calls for, each page by page, strongly consistent (a list
    /// sees every write acknowledged before it was asked for).
    pub(super) async fn scan(&self) -> Result<Scan, StoreError> {
        let items = self.last_items.load(Ordering::Relaxed);
        let segments = (items / ITEMS_PER_SEGMENT + 1).min(MAX_SEGMENTS) as i32;
        let mut reads = tokio::task::JoinSet::new();
        for segment in 0..segments {
            let (client, table) = (self.client.clone(), self.table.clone());
            reads.spawn(scan_segment(client, table, segment, segments));
        }
        let mut out = Scan::default();
        while let Some(read) = reads.join_next().await {
            let part = read.map_err(|e| StoreError::Unavailable(e.to_string()))??;
            out.records.extend(part.records);
            out.unreadable.extend(part.unreadable);
        }
        self.last_items
            .store(out.records.len() + out.unreadable.len(), Ordering::Relaxed);
        Ok(out)
    }
}

/// A parallel scan's segments: one per this many items, at most
/// [`MAX_SEGMENTS`] (a scan page is at most 1 MB, about 500 records).
pub(super) const ITEMS_PER_SEGMENT: usize = 2_000;
pub(super) const MAX_SEGMENTS: usize = 8;

/// One segment of a scan, page by page.
pub(super) async fn scan_segment(
    client: Client,
    table: String,
    segment: i32,
    segments: i32,
) -> Result<Scan, StoreError> {
    let mut out = Scan::default();
    let mut start: Option<HashMap<String, AttributeValue>> = None;
    loop {
        let mut request = client
            .scan()
            .table_name(&table)
            .consistent_read(true)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .set_exclusive_start_key(start.take());
        if segments > 1 {
            request = request.segment(segment).total_segments(segments);
        }
        let page = request.send().await;
        let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
        crate::metrics::dynamodb_call("Scan", page.is_ok(), capacity(units), 0.0);
        let page = page.map_err(failure)?;
        for item in page.items() {
            let name = item
                .get("endpoint_name")
                .and_then(|n| n.as_s().ok())
                .map_or("", String::as_str);
            match read_attributes(name, item) {
                Ok(record) => out.records.push(Arc::new(Stored::of(record))),
                Err(unreadable) => out.unreadable.push(unreadable),
            }
        }
        match page.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => return Ok(out),
        }
    }
}

/// The capacity units a call consumed, as the table said (0 when not).
/// Sends a PutItem made with a condition, counted: `Ok(true)` when it
/// wrote, `Ok(false)` when its condition did not hold.
pub(super) async fn put_if(put: PutItemFluentBuilder) -> Result<bool, StoreError> {
    let result = put
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await;
    let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
    crate::metrics::dynamodb_call("PutItem", result.is_ok(), 0.0, capacity(units));
    match result {
        Ok(_) => Ok(true),
        Err(e)
            if e.as_service_error()
                .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
        {
            Ok(false)
        }
        Err(e) => Err(failure(e)),
    }
}

pub(super) fn capacity(consumed: Option<&ConsumedCapacity>) -> f64 {
    consumed.and_then(|c| c.capacity_units()).unwrap_or(0.0)
}

/// The record an item holds, or why it holds none.
pub(super) fn read_attributes(
    name: &str,
    item: &HashMap<String, AttributeValue>,
) -> Result<Record, Unreadable> {
    let object = from_item(item).map_err(|binary| {
        Unreadable::new(
            name,
            &binary.path,
            "a binary value, which GCO does not write and the console could not keep",
        )
    })?;
    read_item(name, &gco_spec::Value::Object(object))
}
