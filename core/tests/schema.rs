//! The committed JSON Schema must be what the types generate.
//! Regenerate with `GCO_UPDATE_SCHEMA=1 cargo test -p gco-spec --features schema --test schema`.

use std::path::Path;

#[test]
fn committed_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/endpoint-spec.schema.json");
    let generated = gco_spec::types::endpoint_spec_schema();
    if std::env::var_os("GCO_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run GCO_UPDATE_SCHEMA=1 cargo test -p gco-spec --features schema --test schema",
        path.display()
    );
}

#[test]
fn schema_describes_the_block() {
    let schema: serde_json::Value =
        serde_json::from_str(&gco_spec::types::endpoint_spec_schema()).unwrap();
    let defs = &schema["$defs"];
    assert_eq!(
        defs["MooncakeMode"]["enum"],
        serde_json::json!(["both", "disaggregated", "store"])
    );
    assert_eq!(
        defs["MooncakeTopology"]["properties"]["prefill"]["maximum"],
        1000
    );
    assert_eq!(schema["properties"]["port"]["maximum"], 65535);
}
