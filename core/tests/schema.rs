//! The committed JSON Schemas (`core/schema/`) must be what the types
//! generate, and name exactly the members the checks know.
//! Regenerate with `UPDATE_EXPECT=1 cargo test -p gco-spec --features schema --test schema`.

use std::collections::BTreeSet;
use std::path::Path;

use expect_test::expect_file;
use gco_spec::mooncake::{BLOCK_KEYS, SECTION_KEYS};
use gco_spec::schemas::{SCHEMAS, schema_texts};
use gco_spec::spec::SPEC_KEYS;
use gco_spec::{CanarySpec, DeployRequest, Record};
use serde_json::{Value, json};

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    for ((file, _), generated) in SCHEMAS.iter().zip(schema_texts()) {
        expect_file![dir.join(file)].assert_eq(&generated);
    }
}

/// Editors and settings refer to a schema by its `$id`: it never changes.
#[test]
fn each_schema_has_its_stable_id() {
    let ids: Vec<(String, String)> = SCHEMAS
        .iter()
        .zip(schema_texts())
        .map(|((file, _), text)| {
            let schema: Value = serde_json::from_str(&text).unwrap();
            (file.to_string(), schema["$id"].as_str().unwrap().to_owned())
        })
        .collect();
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(f, i)| (f.to_string(), i.to_string()))
            .collect()
    };
    assert_eq!(
        ids,
        pairs(&[
            (
                "deploy-request.schema.json",
                "urn:gco-spec:schema:deploy-request"
            ),
            (
                "endpoint-record.schema.json",
                "urn:gco-spec:schema:endpoint-record"
            ),
            (
                "endpoint-spec.schema.json",
                "urn:gco-spec:schema:endpoint-spec"
            ),
        ])
    );
}

/// The object schema at `path` below `root`: through `properties`, local
/// `$ref`s, and the non-null branch of an optional member's `anyOf`.
fn object_at<'a>(root: &'a Value, path: &[String]) -> &'a Value {
    let mut node = resolve(root, root);
    for segment in path {
        node = resolve(root, &node["properties"][segment.as_str()]);
        assert!(node.is_object(), "no member {segment} in {path:?}");
    }
    node
}

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    if let Some(reference) = node["$ref"].as_str() {
        let name = reference.strip_prefix("#/$defs/").expect("a local $ref");
        return resolve(root, &root["$defs"][name]);
    }
    if let Some(branches) = node["anyOf"].as_array()
        && let Some(object) = branches
            .iter()
            .map(|b| resolve(root, b))
            .find(|b| b.get("properties").is_some())
    {
        return object;
    }
    node
}

/// What the checks know at one place of a document: its members, and
/// whether they warn of any other (then the schema must refuse it too).
struct Known {
    path: Vec<String>,
    members: Vec<&'static str>,
    closed: bool,
}

fn known(path: &[&str], members: &[&'static str], closed: bool) -> Known {
    Known {
        path: path.iter().map(|s| s.to_string()).collect(),
        members: members.to_vec(),
        closed,
    }
}

/// The block and its sections, below `prefix`.
fn block_members(prefix: &[&str]) -> Vec<Known> {
    let mut out = vec![known(prefix, BLOCK_KEYS, true)];
    for (section, members) in SECTION_KEYS {
        let mut path = prefix.to_vec();
        path.extend(section.split('.'));
        out.push(known(&path, members, true));
    }
    out
}

/// A spec's members and the block's, below `prefix`.
fn spec_members(prefix: &[&str]) -> Vec<Known> {
    let mut out = vec![known(prefix, &SPEC_KEYS, true)];
    let mut canary = prefix.to_vec();
    canary.push("canary");
    // The checks read the canary's members and warn of no other.
    out.push(known(&canary, &CanarySpec::KEYS, false));
    let mut block = prefix.to_vec();
    block.push("mooncake");
    out.extend(block_members(&block));
    out
}

/// Every place of each schema's documents and what the checks know there.
fn known_by_schema() -> Vec<(&'static str, Vec<Known>)> {
    let mut request = vec![known(&[], DeployRequest::KEYS, true)];
    request.extend(block_members(&["mooncake"]));
    // `mooncake_store` and the like are the block's sections as deploy
    // takes them apart.
    for (section, members) in SECTION_KEYS {
        let mut parts = section.split('.');
        let field = format!("mooncake_{}", parts.next().unwrap());
        if DeployRequest::KEYS.contains(&field.as_str()) {
            let mut path = vec![field];
            path.extend(parts.map(str::to_owned));
            request.push(Known {
                path,
                members: members.to_vec(),
                closed: true,
            });
        }
    }
    // A stored record keeps attributes it does not know, silently.
    let mut record = vec![known(&[], &Record::ATTRIBUTES, false)];
    record.extend(spec_members(&["spec"]));
    vec![
        ("deploy-request.schema.json", request),
        ("endpoint-record.schema.json", record),
        ("endpoint-spec.schema.json", spec_members(&[])),
    ]
}

#[test]
fn every_member_the_checks_know_is_in_the_schemas_and_no_other() {
    let texts = schema_texts();
    let mut places = 0;
    let mut members = 0;
    for (file, places_known) in known_by_schema() {
        let at = SCHEMAS.iter().position(|(f, _)| *f == file).unwrap();
        let root: Value = serde_json::from_str(&texts[at]).unwrap();
        for place in places_known {
            let schema = object_at(&root, &place.path);
            let named: BTreeSet<&str> = schema["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{file} {:?} has no properties", place.path))
                .keys()
                .map(String::as_str)
                .collect();
            let expected: BTreeSet<&str> = place.members.iter().copied().collect();
            assert_eq!(named, expected, "{file} at {:?}", place.path);
            let refused = schema["additionalProperties"] == json!(false);
            assert_eq!(
                refused, place.closed,
                "{file} at {:?}: other members refused",
                place.path
            );
            places += 1;
            members += expected.len();
        }
    }
    // The figures the closing note reports.
    println!("schema members checked: {members} at {places} places in 3 schemas");
    assert_eq!(places, 36);
}

#[test]
fn the_issue_45_members_are_described() {
    let texts = schema_texts();
    let root = |file: &str| -> Value {
        let at = SCHEMAS.iter().position(|(f, _)| *f == file).unwrap();
        serde_json::from_str(&texts[at]).unwrap()
    };
    let path = |p: &[&str]| -> Vec<String> { p.iter().map(|s| s.to_string()).collect() };
    let spec = root("endpoint-spec.schema.json");
    let store = object_at(&spec, &path(&["mooncake", "store"]));
    assert!(
        store["properties"]["master_image"]["description"]
            .as_str()
            .unwrap()
            .contains("MOONCAKE_MASTER_IMAGE")
    );
    let transfer = object_at(&spec, &path(&["mooncake", "transfer"]));
    assert_eq!(
        transfer["properties"]["peer_addresses"]["type"],
        json!(["array", "null"])
    );
    let canary = object_at(&spec, &path(&["canary"]));
    assert_eq!(canary["properties"]["weight"]["maximum"], 99);
    let request = root("deploy-request.schema.json");
    assert_eq!(request["required"], json!(["endpoint_name"]));
    let record = root("endpoint-record.schema.json");
    assert_eq!(record["required"], json!(["endpoint_name", "spec"]));
}

#[test]
fn schema_describes_the_block() {
    let texts = schema_texts();
    let schema: Value = serde_json::from_str(&texts[2]).unwrap();
    let defs = &schema["$defs"];
    assert_eq!(
        defs["MooncakeMode"]["enum"],
        json!(["both", "disaggregated", "store"])
    );
    assert_eq!(
        defs["MooncakeTopology"]["properties"]["prefill"]["maximum"],
        1000
    );
    assert_eq!(schema["properties"]["port"]["maximum"], 65535);
    // A byte size is taken as an integer or as digits.
    let size = &defs["MooncakeStoreConfig"]["properties"]["global_segment_size"];
    assert_eq!(size["anyOf"][0]["type"], "integer");
    assert_eq!(size["anyOf"][1]["type"], "string");
}

/// The schemas' verdicts on documents, by Python's `jsonschema` (draft
/// 2020-12, as editors read them; scripts/setup-tests.sh installs it): per
/// document, its schema file and the paths of its errors (of an `anyOf`,
/// its deepest branch's, as an editor shows it).
fn schema_errors(documents: &[(&str, Value)]) -> Vec<Vec<String>> {
    const CHECK: &str = "import json, sys\n\
        from jsonschema import Draft202012Validator\n\
        def deepest(e):\n\
        \x20   paths = ['.'.join(map(str, e.absolute_path))] + [deepest(c) for c in e.context]\n\
        \x20   return max(paths, key=lambda p: (len(p.split('.')) if p else 0, p))\n\
        schemas = {}\n\
        for name, document in json.load(sys.stdin):\n\
        \x20   if name not in schemas:\n\
        \x20       schemas[name] = json.load(open(sys.argv[1] + '/' + name))\n\
        \x20       Draft202012Validator.check_schema(schemas[name])\n\
        \x20   errors = Draft202012Validator(schemas[name]).iter_errors(document)\n\
        \x20   print(json.dumps(sorted(deepest(e) for e in errors)))\n";
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/schema");
    let mut child = std::process::Command::new("python3")
        .args(["-c", CHECK, dir])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input = serde_json::to_string(documents).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the schema check itself failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Every golden deploy request, the record it makes (with the case's
/// `canary`, which GCO's canary operation writes, in its spec) and that
/// record's spec: where the checks warn of an unknown member, the schema
/// refuses the object holding it, and where they find nothing, nor does
/// the schema.
#[test]
fn the_schemas_take_what_the_checks_take() {
    use gco_spec::document::{check_document, record_of_document};
    use gco_spec::{DeployContext, Frameworks, json};

    let golden = include_str!("golden/requests.json");
    let golden: serde_json::Map<String, Value> = serde_json::from_str(golden).unwrap();
    let regions = ["us-east-1".to_owned()];
    let ctx = DeployContext {
        deployed_regions: Some(&regions),
        ..DeployContext::default()
    };
    let mut documents = Vec::new();
    let mut expected = Vec::new();
    for (name, request) in &golden {
        // The checks' verdict: unknown members only, each at the object
        // holding it (where a JSON Schema reports `additionalProperties`).
        let parsed = json::parse(&request.to_string()).unwrap();
        let report = check_document(&parsed, &Frameworks::CURRENT);
        let mut unknown: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| {
                assert!(d.names_key(), "{name}: {d}");
                d.path.rsplit_once('.').map_or("", |(o, _)| o).to_owned()
            })
            .collect();
        unknown.sort();
        documents.push(("deploy-request.schema.json", request.clone()));
        expected.push(unknown);

        let mut request = request.clone();
        let canary = request.as_object_mut().unwrap().remove("canary");
        let parsed = json::parse(&request.to_string()).unwrap();
        let record = record_of_document(&parsed, &ctx).unwrap();
        let mut record: Value = serde_json::from_str(&record.to_value().to_json()).unwrap();
        if let Some(canary) = canary {
            record["spec"]["canary"] = canary;
        }
        let stored = json::parse(&record.to_string()).unwrap();
        let report = check_document(&stored, &Frameworks::CURRENT);
        assert!(report.diagnostics.is_empty(), "{name}: {report:?}");
        documents.push(("endpoint-spec.schema.json", record["spec"].clone()));
        documents.push(("endpoint-record.schema.json", record));
        expected.extend([vec![], vec![]]);
    }
    assert_eq!(schema_errors(&documents), expected);
    assert!(
        expected.iter().any(|e| !e.is_empty()),
        "a golden case warns"
    );
    assert!(
        documents
            .iter()
            .any(|(_, d)| d["spec"]["canary"].is_object())
    );

    let with = |document: &Value, pointer: &str, key: &str| {
        let mut document = document.clone();
        document.pointer_mut(pointer).unwrap()[key] = json!(1);
        document
    };
    let (request, record) = (&documents[0].1, &documents[2].1);
    let unknown = [
        ("deploy-request.schema.json", with(request, "", "prefil")),
        (
            "endpoint-record.schema.json",
            with(record, "/spec", "replica"),
        ),
        (
            "endpoint-record.schema.json",
            with(record, "/spec/mooncake/topology", "prefil"),
        ),
        // A record keeps attributes it does not know; so does its schema.
        (
            "endpoint-record.schema.json",
            with(record, "", "created_by"),
        ),
    ];
    assert_eq!(
        schema_errors(&unknown),
        [
            vec![String::new()],
            vec!["spec".to_owned()],
            vec!["spec.mooncake.topology".to_owned()],
            vec![],
        ]
    );
    println!(
        "documents checked against the schemas: {} and {} with an unknown member",
        documents.len(),
        unknown.len()
    );
}
