//! Sign-outs as items of the history table.

use super::*;

/// Sign-outs as items of the history table, in their own partition
/// ([`sign_outs::DYNAMODB_PARTITION`]), keyed by the session's digest.
impl SignOuts for DynamoStore {
    fn sign_out<'a>(
        &'a self,
        digest: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let history = self.history.as_ref().ok_or_else(no_sign_outs)?;
            let result = self
                .client
                .put_item()
                .table_name(&history.name)
                .item(
                    "endpoint_name",
                    AttributeValue::S(sign_outs::DYNAMODB_PARTITION.to_owned()),
                )
                .item("change_id", AttributeValue::S(digest.to_owned()))
                .item(
                    sign_outs::DYNAMODB_TTL_ATTRIBUTE,
                    AttributeValue::N(until.to_string()),
                )
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await;
            let units = result.as_ref().ok().and_then(|o| o.consumed_capacity());
            crate::metrics::dynamodb_call("PutItem", result.is_ok(), 0.0, capacity(units));
            result.map(|_| ()).map_err(failure)
        })
    }

    fn signed_out(&self, now: u64) -> BoxFuture<'_, Result<Vec<(String, u64)>, StoreError>> {
        Box::pin(async move {
            let history = self.history.as_ref().ok_or_else(no_sign_outs)?;
            let mut out = Vec::new();
            let mut start: Option<HashMap<String, AttributeValue>> = None;
            loop {
                let page = self
                    .client
                    .query()
                    .table_name(&history.name)
                    .consistent_read(true)
                    .key_condition_expression("endpoint_name = :partition")
                    .expression_attribute_values(
                        ":partition",
                        AttributeValue::S(sign_outs::DYNAMODB_PARTITION.to_owned()),
                    )
                    .projection_expression("change_id, #until")
                    .expression_attribute_names("#until", sign_outs::DYNAMODB_TTL_ATTRIBUTE)
                    .return_consumed_capacity(ReturnConsumedCapacity::Total)
                    .set_exclusive_start_key(start.take())
                    .send()
                    .await;
                let units = page.as_ref().ok().and_then(|p| p.consumed_capacity());
                crate::metrics::dynamodb_call("Query", page.is_ok(), capacity(units), 0.0);
                let page = page.map_err(failure)?;
                for item in page.items() {
                    let until = item
                        .get(sign_outs::DYNAMODB_TTL_ATTRIBUTE)
                        .and_then(|v| v.as_n().ok())
                        .and_then(|n| n.parse::<u64>().ok());
                    let digest = item.get("change_id").and_then(|v| v.as_s().ok());
                    // TTL deletes within days of the expiry, not at it.
                    if let (Some(digest), Some(until)) = (digest, until)
                        && until > now
                    {
                        out.push((digest.clone(), until));
                    }
                }
                match page.last_evaluated_key() {
                    Some(key) if !key.is_empty() => start = Some(key.clone()),
                    _ => return Ok(out),
                }
            }
        })
    }
}

pub(super) fn no_sign_outs() -> StoreError {
    StoreError::Rejected(
        "sign-outs are kept in the history table, and there is none (--history-table off)".into(),
    )
}
