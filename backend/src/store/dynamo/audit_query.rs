//! The audit view's reads: one query per part, endpoint or operation.

use super::*;

/// Where one part of an audit read looks: one endpoint's entries (the
/// table's own key), or one operation's (the audit index).
#[derive(Debug, Clone)]
pub(super) enum AuditPart {
    Endpoint(String),
    Operation(String),
}

impl DynamoStore {
    /// The audit view's read: one query per part, at once, merged
    /// ([`audit::merge`]). With an endpoint named, its own entries (the
    /// table's key); else each operation's in the index.
    pub(super) async fn read_audit(
        &self,
        filter: &AuditFilter,
        below: Option<&Position>,
        limit: usize,
    ) -> Result<AuditRead, StoreError> {
        let Some(history) = &self.history else {
            return Ok(AuditRead::default());
        };
        let parts: Vec<AuditPart> = match &filter.endpoint {
            Some(name) => vec![AuditPart::Endpoint(name.clone())],
            None => filter
                .operations()
                .into_iter()
                .map(|op| AuditPart::Operation(op.to_owned()))
                .collect(),
        };
        let mut reads = tokio::task::JoinSet::new();
        for part in parts {
            let (client, history_table) = (self.client.clone(), history.name.clone());
            let (filter, below) = (filter.clone(), below.cloned());
            reads.spawn(audit_part(
                client,
                history_table,
                part,
                filter,
                below,
                limit,
            ));
        }
        let mut found = Vec::new();
        while let Some(read) = reads.join_next().await {
            found.push(read.map_err(|e| StoreError::Unavailable(e.to_string()))??);
        }
        Ok(audit::merge(found, limit))
    }
}

/// One part of an audit read: newest first below `below`, until more than
/// `limit` are admitted, the part ends, or [`audit::READ_BUDGET`] items
/// were looked at.
pub(super) async fn audit_part(
    client: Client,
    history_table: String,
    part: AuditPart,
    filter: AuditFilter,
    below: Option<Position>,
    limit: usize,
) -> Result<PartRead, StoreError> {
    let (index, key, value) = match &part {
        AuditPart::Endpoint(name) => (None, "endpoint_name", name.clone()),
        AuditPart::Operation(op) => (Some(AUDIT_INDEX.to_owned()), "operation", op.clone()),
    };
    let mut names = HashMap::from([
        ("#p".to_owned(), key.to_owned()),
        ("#n".to_owned(), "endpoint_name".to_owned()),
        ("#c".to_owned(), "change_id".to_owned()),
        ("#o".to_owned(), "operation".to_owned()),
    ]);
    let mut values = HashMap::from([(":p".to_owned(), AttributeValue::S(value))]);
    // The sort key's range: both ends included, the exact bounds checked
    // on each item (`admits`, and below the cursor).
    let high = [below.as_ref().map(|b| b.id.clone()), filter.to_id.clone()]
        .into_iter()
        .flatten()
        .min();
    let mut condition = "#p = :p".to_owned();
    match (&filter.from_id, high) {
        (Some(low), Some(high)) => {
            condition.push_str(" AND #c BETWEEN :low AND :high");
            values.insert(":low".into(), AttributeValue::S(low.clone()));
            values.insert(":high".into(), AttributeValue::S(high));
        }
        (Some(low), None) => {
            condition.push_str(" AND #c >= :low");
            values.insert(":low".into(), AttributeValue::S(low.clone()));
        }
        (None, Some(high)) => {
            condition.push_str(" AND #c <= :high");
            values.insert(":high".into(), AttributeValue::S(high));
        }
        (None, None) => {}
    }
    // A filter may name no key of what is queried (the index's
    // `operation`, the table's `endpoint_name`), so the search over names
    // and the index's operation are checked here, on each item
    // (`admits`); reading costs the same either way.
    let mut filters = Vec::new();
    if let AuditPart::Endpoint(_) = &part {
        // Sign-outs share the table and have no operation.
        filters.push("attribute_exists(#o)".to_owned());
        if let Some(op) = &filter.operation {
            filters.push("#o = :op".into());
            values.insert(":op".into(), AttributeValue::S(op.clone()));
        }
    }
    if let Some(who) = &filter.who {
        filters.push("#w = :who".into());
        names.insert("#w".into(), "who".into());
        values.insert(":who".into(), AttributeValue::S(who.clone()));
    }
    let narrowed = filter.who.is_some()
        || filter.search.is_some()
        || (filter.operation.is_some() && index.is_none());
    let filters = (!filters.is_empty()).then(|| filters.join(" AND "));
    let projected = AUDIT_INDEX_ATTRIBUTES
        .iter()
        .enumerate()
        .map(|(i, attr)| {
            names.insert(format!("#a{i}"), (*attr).to_owned());
            format!("#a{i}")
        })
        .chain(["#n", "#c", "#o"].map(str::to_owned))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = PartRead::default();
    let mut looked = 0;
    let mut start: Option<HashMap<String, AttributeValue>> = None;
    loop {
        // Without a filter every item read is one of the page; with one,
        // read more at a time, up to the budget.
        let wanted = limit + 1 - out.matches.len();
        let wanted = if narrowed {
            (wanted * 4).max(100)
        } else {
            wanted
        };
        let page_limit = wanted.min(audit::READ_BUDGET - looked);
        let page = client
            .query()
            .table_name(&history_table)
            .set_index_name(index.clone())
            .key_condition_expression(&condition)
            .set_filter_expression(filters.clone())
            .projection_expression(&projected)
            .set_expression_attribute_names(Some(names.clone()))
            .set_expression_attribute_values(Some(values.clone()))
            .scan_index_forward(false)
            .limit(i32::try_from(page_limit).unwrap_or(i32::MAX))
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .set_exclusive_start_key(start.take())
            .send()
            .await;
        let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
        crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
        let page = match page {
            Ok(page) => page,
            Err(e) if index.is_some() && is_missing_index(&e) => {
                return Err(StoreError::NotSaved(format!(
                    "the history table '{history_table}' has no index {AUDIT_INDEX}, which the audit view reads: add it (--create-table does, or the CDK stack; README, \"The audit view\")"
                )));
            }
            Err(e) => return Err(failure(e)),
        };
        looked += usize::try_from(page.scanned_count()).unwrap_or(0);
        for item in page.items() {
            let Some(entry) = read_audit_item(item) else {
                continue;
            };
            let under = below.as_ref().is_none_or(|b| Position::of(&entry) < *b);
            if under && filter.admits(&entry) {
                out.matches.push(entry);
            }
        }
        let last = page.last_evaluated_key().filter(|k| !k.is_empty()).cloned();
        let Some(last) = last else {
            return Ok(out);
        };
        if out.matches.len() > limit || looked >= audit::READ_BUDGET {
            let text = |k: &str| last.get(k).and_then(|v| v.as_s().ok()).cloned();
            out.frontier = Some(Position {
                id: text("change_id").unwrap_or_default(),
                endpoint: text("endpoint_name").unwrap_or_default(),
            });
            return Ok(out);
        }
        start = Some(last);
    }
}

/// Whether a query failed because the index it names is not there.
pub(super) fn is_missing_index<E: std::error::Error + 'static>(
    e: &SdkError<E, HttpResponse>,
) -> bool {
    let text = DisplayErrorContext(e).to_string();
    text.contains("index") && (text.contains("ValidationException") || text.contains("not have"))
}

/// An audit index item (or a table item, projected alike) as the audit
/// view lists it.
pub(super) fn read_audit_item(
    item: &HashMap<String, AttributeValue>,
) -> Option<gco_api::AuditEntry> {
    let text = |key: &str| item.get(key).and_then(|v| v.as_s().ok()).cloned();
    Some(gco_api::AuditEntry {
        endpoint: text("endpoint_name")?,
        id: text("change_id")?,
        at: text("at").unwrap_or_default(),
        who: text("who"),
        operation: text("operation")?,
        request_id: text("request_id"),
        client_request_id: text("client_request_id"),
    })
}
