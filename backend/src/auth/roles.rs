//! Which roles a signed-in user holds: `--roles-file` (or `--roles`, the
//! same TOML inline) maps the groups the identity provider names to roles,
//! with a default for users in none of them.

use std::collections::BTreeMap;

use gco_api::Role;
use serde::Deserialize;

use super::tokens::not_a_role;

/// The mapping from groups to roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolesMap {
    /// `None`: a user in no mapped group holds no role.
    pub default: Option<Role>,
    pub groups: BTreeMap<String, Role>,
}

/// Without a mapping, every signed-in user may look and nothing more.
impl Default for RolesMap {
    fn default() -> RolesMap {
        RolesMap {
            default: Some(Role::Viewer),
            groups: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RolesFile {
    default: String,
    #[serde(default)]
    groups: BTreeMap<String, String>,
}

impl RolesMap {
    /// Reads the TOML: `default = "<role>"` (or `"none"`) and a `[groups]`
    /// table mapping a group to a role; an error names the field at fault.
    pub fn parse(text: &str) -> Result<RolesMap, String> {
        let file: RolesFile = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        let default = match file.default.as_str() {
            "none" => None,
            role => Some(
                Role::parse(role)
                    .ok_or_else(|| format!("default: {} (or \"none\")", not_a_role(role)))?,
            ),
        };
        let groups = file
            .groups
            .into_iter()
            .map(|(group, role)| match Role::parse(&role) {
                Some(role) => Ok((group, role)),
                None => Err(format!("groups.{group:?}: {}", not_a_role(&role))),
            })
            .collect::<Result<_, _>>()?;
        Ok(RolesMap { default, groups })
    }

    /// The roles of a user in `groups`: each mapped group's role, else the
    /// default.
    pub fn roles_of(&self, groups: &[String]) -> Vec<Role> {
        let mut roles: Vec<Role> = groups
            .iter()
            .filter_map(|g| self.groups.get(g).copied())
            .collect();
        if roles.is_empty() {
            roles.extend(self.default);
        }
        roles.sort();
        roles.dedup();
        roles
    }
}

/// The groups a claim holds: a list of strings, or one string (some
/// providers send a single group that way), else none.
pub fn groups_of(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|g| g.as_str().map(str::to_owned))
            .collect(),
        Some(serde_json::Value::String(group)) => vec![group.clone()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_map_to_roles_with_a_default() {
        let map = RolesMap::parse(
            "default = \"viewer\"\n[groups]\n\"ml-admins\" = \"admin\"\noncall = \"operator\"\n",
        )
        .unwrap();
        assert_eq!(map.roles_of(&[]), vec![Role::Viewer]);
        assert_eq!(map.roles_of(&["oncall".into()]), vec![Role::Operator]);
        assert_eq!(
            map.roles_of(&["oncall".into(), "ml-admins".into(), "x".into()]),
            vec![Role::Operator, Role::Admin]
        );
        let closed = RolesMap::parse("default = \"none\"").unwrap();
        assert_eq!(closed.roles_of(&["x".into()]), vec![]);
    }

    #[test]
    fn a_bad_mapping_is_named() {
        assert_eq!(
            RolesMap::parse("default = \"root\"").unwrap_err(),
            "default: \"root\" is not a role: viewer, operator or admin (or \"none\")"
        );
        assert_eq!(
            RolesMap::parse("default = \"viewer\"\n[groups]\nops = \"boss\"").unwrap_err(),
            "groups.\"ops\": \"boss\" is not a role: viewer, operator or admin"
        );
        assert!(
            RolesMap::parse("[groups]\nops = \"admin\"")
                .unwrap_err()
                .contains("default")
        );
        assert!(RolesMap::parse("default = \"viewer\"\nadmins = []").is_err());
    }

    #[test]
    fn a_claim_is_a_list_or_one_group() {
        let list = serde_json::json!(["a", 1, "b"]);
        assert_eq!(groups_of(Some(&list)), vec!["a", "b"]);
        assert_eq!(groups_of(Some(&serde_json::json!("a"))), vec!["a"]);
        assert_eq!(
            groups_of(Some(&serde_json::json!({"a": 1}))),
            Vec::<String>::new()
        );
        assert_eq!(groups_of(None), Vec::<String>::new());
    }
}
