//! `deploy/iam-policy.json` grants exactly the DynamoDB actions the store
//! code calls, each on the table it calls it on: read from the source, so
//! a new call without its permission (or a permission no call needs) fails
//! here rather than in a team's account.
//!
//! Each call is a `.client.<operation>()` (or `client.<operation>()`) in
//! `backend/src/store/` and its folders, on the table its request names: `history` in the
//! `table_name(...)` argument is the history table, anything else the
//! endpoints table. A TransactWriteItems needs no action of its own: IAM
//! checks the action of each item in it (`Put` is PutItem, `Update`
//! UpdateItem, `Delete` DeleteItem, `ConditionCheck` ConditionCheckItem).
//!
//! CreateTable is not in the policy, on purpose: only `--create-table`
//! calls it (for local servers and first installs), and so the
//! DescribeTable it polls with while the new table becomes active, and the
//! UpdateTimeToLive that turns on the sign-outs' expiry, and the UpdateTable
//! that adds the audit view's index to an older history table. Those calls
//! live in `create_one`, `wait_until_active`, `wait_until`,
//! `expire_sign_outs` and `add_audit_index`, left out here; a console running under the policy creates nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gco_spec::json::{Value, parse};

/// Functions reached only with `--create-table`.
const CREATE_TABLE_ONLY: [&str; 5] = [
    "create_one",
    "wait_until_active",
    "wait_until",
    "expire_sign_outs",
    "add_audit_index",
];

/// The table each policy statement grants, by its Sid.
const STATEMENTS: [(&str, Table); 3] = [
    ("EndpointsTable", Table::Endpoints),
    ("HistoryTable", Table::History),
    ("HistoryIndex", Table::HistoryIndex),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    Endpoints,
    History,
    /// The history table's indexes (the audit view's): a request that
    /// names an `index_name`.
    HistoryIndex,
}

/// `put_item` -> `PutItem`.
fn action(operation: &str) -> String {
    operation
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The name of the function `line` is in, from the lines before it.
fn enclosing_fn(lines: &[&str], line: usize) -> String {
    lines[..=line]
        .iter()
        .rev()
        .find_map(|l| {
            let at = l.find("fn ")?;
            let rest = &l[at + 3..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            Some(rest[..end].to_owned())
        })
        .unwrap_or_default()
}

/// The table the request begun at `line` names, from its `table_name(...)`
/// within the next lines.
fn table_of(lines: &[&str], line: usize) -> Table {
    let request = &lines[line..lines.len().min(line + 12)];
    let named = request
        .iter()
        .find_map(|l| l.split_once(".table_name(").map(|(_, arg)| arg.to_owned()))
        .unwrap_or_else(|| panic!("no table_name after line {}: {}", line + 1, lines[line]));
    if named.contains("history") && request.iter().any(|l| l.contains("index_name(")) {
        Table::HistoryIndex
    } else if named.contains("history") {
        Table::History
    } else {
        Table::Endpoints
    }
}

/// Every (table, action) the store code calls, outside `--create-table`'s
/// functions; and whether CreateTable is called only inside them.
fn called() -> (BTreeSet<(Table, String)>, bool) {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    let mut calls = BTreeSet::new();
    let mut create_table_contained = true;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut found: Vec<String> = Vec::new();
            // `.client.op()` / `client.op()`, the call on its own line or not.
            for (i, _) in code.match_indices("client") {
                let rest = code[i + "client".len()..].trim_start();
                let rest = rest.strip_prefix('.').map(str::trim_start);
                let next_line = lines.get(n + 1).map(|l| l.trim_start());
                let call = match rest {
                    Some(r) if !r.is_empty() => Some(r),
                    // `self.client` then `.op()` on the next line.
                    _ if rest.is_none() && code[i..].trim_end() == "client" => {
                        next_line.and_then(|l| l.strip_prefix('.'))
                    }
                    _ => None,
                };
                if let Some(call) = call {
                    let op: String = call
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    // A client's own methods are no calls of the table.
                    let own = ["clone", "config"].contains(&op.as_str());
                    if !op.is_empty() && !own && call[op.len()..].starts_with("()") {
                        found.push(op);
                    }
                }
            }
            // The items of a transaction, each its own action.
            for (item, op) in [
                ("Put::builder()", "put_item"),
                ("Update::builder()", "update_item"),
                ("Delete::builder()", "delete_item"),
                ("ConditionCheck::builder()", "condition_check_item"),
            ] {
                if code.contains(item) {
                    found.push(op.to_owned());
                }
            }
            for op in found {
                if op == "transact_write_items" {
                    continue;
                }
                let function = enclosing_fn(&lines, n);
                if CREATE_TABLE_ONLY.contains(&function.as_str()) {
                    continue;
                }
                if op == "create_table" {
                    create_table_contained = false;
                }
                calls.insert((table_of(&lines, n), action(&op)));
            }
        }
    }
    (calls, create_table_contained)
}

/// Every (table, action) the policy grants.
fn granted() -> BTreeSet<(Table, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/iam-policy.json");
    let policy = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let tables: BTreeMap<&str, Table> = STATEMENTS.into_iter().collect();
    let mut out = BTreeSet::new();
    let Some(Value::List(statements)) = policy.as_object().unwrap().get("Statement") else {
        panic!("no Statement list");
    };
    for statement in statements {
        let o = statement.as_object().unwrap();
        let sid = o.get("Sid").and_then(Value::as_str).unwrap();
        let table = tables[sid];
        assert_eq!(o.get("Effect").and_then(Value::as_str), Some("Allow"));
        let Some(Value::List(actions)) = o.get("Action") else {
            panic!("{sid}: no Action list");
        };
        for a in actions {
            let a = a.as_str().unwrap();
            let a = a.strip_prefix("dynamodb:").unwrap_or_else(|| panic!("{a}"));
            out.insert((table, a.to_owned()));
        }
        let resource = o.get("Resource").and_then(Value::as_str).unwrap();
        let index = format!(
            "table/gco-inference-endpoints-history/index/{}",
            gco_console::store::AUDIT_INDEX
        );
        let expected = match table {
            Table::Endpoints => "table/gco-inference-endpoints",
            Table::History => "table/gco-inference-endpoints-history",
            Table::HistoryIndex => index.as_str(),
        };
        assert!(resource.ends_with(expected), "{sid}: {resource}");
    }
    out
}

#[test]
fn the_policy_grants_exactly_the_calls_the_stores_make() {
    let (calls, create_table_contained) = called();
    assert!(
        create_table_contained,
        "CreateTable is called outside --create-table's functions"
    );
    // The scan finds what it should: the calls this test was written
    // against are among them.
    for known in [
        (Table::Endpoints, "GetItem"),
        (Table::Endpoints, "UpdateItem"),
        (Table::History, "Query"),
        (Table::HistoryIndex, "Query"),
    ] {
        assert!(
            calls.contains(&(known.0, known.1.to_owned())),
            "{known:?} not found: {calls:?}"
        );
    }
    assert_eq!(granted(), calls, "deploy/iam-policy.json against the code");
}

#[test]
fn actions_are_named_as_iam_names_them() {
    assert_eq!(action("put_item"), "PutItem");
    assert_eq!(action("transact_write_items"), "TransactWriteItems");
    assert_eq!(action("scan"), "Scan");
}
