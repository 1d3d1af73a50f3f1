//! The committed JSON Schemas (`core/schema/`), generated from the types
//! the validator reads: the deploy request, the record and the spec.

/// The committed JSON Schemas (`core/schema/`): each file's name, its
/// stable `$id`, in the order of [`schema_texts`].
pub const SCHEMAS: [(&str, &str); 3] = [
    (
        "deploy-request.schema.json",
        "urn:gco-spec:schema:deploy-request",
    ),
    (
        "endpoint-record.schema.json",
        "urn:gco-spec:schema:endpoint-record",
    ),
    (
        "endpoint-spec.schema.json",
        "urn:gco-spec:schema:endpoint-spec",
    ),
];

/// The text of each of [`SCHEMAS`], in its order: pretty-printed with a
/// final newline, `$schema`, `$id`, `title` and `description` first.
pub fn schema_texts() -> [String; 3] {
    let schemas = [
        schemars::schema_for!(crate::deploy::DeployRequest),
        schemars::schema_for!(crate::record::Record),
        schemars::schema_for!(crate::types::EndpointSpec),
    ];
    let mut texts = schemas.map(|schema| schema.to_value());
    for ((_, id), text) in SCHEMAS.iter().zip(&mut texts) {
        let serde_json::Value::Object(members) = text else {
            unreachable!("a schema of a struct is an object")
        };
        // What a reader looks for first, first.
        let mut with_id = serde_json::Map::new();
        for key in ["$schema", "$id", "title", "description"] {
            let value = match key {
                "$id" => Some((*id).into()),
                _ => members.shift_remove(key),
            };
            if let Some(value) = value {
                with_id.insert(key.into(), value);
            }
        }
        with_id.append(members);
        *text = serde_json::Value::Object(with_id);
    }
    texts.map(|text| {
        let mut text = serde_json::to_string_pretty(&text).expect("a schema serializes");
        text.push('\n');
        text
    })
}
