//! The `--monitor-settings` file: what each region's monitor is configured
//! with, in TOML (`[default]`, `[regions.us-east-1]`), read into the core's
//! [`MonitorSettings`], which refuses an unknown key at its path.

use std::path::Path;

use gco_spec::MonitorSettings;

/// Reads and checks a settings file; the error names the file and the key.
pub fn read(path: &Path) -> Result<MonitorSettings, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses settings from TOML text.
pub fn parse(text: &str) -> Result<MonitorSettings, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let json = serde_json::to_string(&table).map_err(|e| e.to_string())?;
    let value = gco_spec::json::parse(&json).map_err(|e| e.to_string())?;
    MonitorSettings::from_value(&value).map_err(|d| d.message)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_region_overrides_the_default() {
        let s = parse(
            "[default]\nmaster_image = \"mooncake/master:0.3.6\"\ncluster_name = \"gco\"\n\n[regions.eu-west-1]\nmaster_image = \"m:2\"\n[regions.us-west-2]\ncluster_name = \"west\"\n",
        )
        .unwrap();
        assert_eq!(s.context("eu-west-1").master_image(), Some("m:2"));
        assert_eq!(
            s.context("us-east-1").master_image(),
            Some("mooncake/master:0.3.6")
        );
        assert_eq!(s.context("us-west-2").cluster_name(), Some("west"));
        assert_eq!(
            s.context("us-west-2").master_image(),
            Some("mooncake/master:0.3.6")
        );
        assert_eq!(
            gco_spec::MonitorSettings::from_value(&s.to_value()).unwrap(),
            s
        );
    }

    #[test]
    fn mistakes_are_named() {
        let e = parse("[default]\nmaster_imag = \"x\"\n").unwrap_err();
        assert!(
            e.contains("unknown monitor setting default.master_imag"),
            "{e}"
        );
        let e = parse("[regions.moon]\nmaster_image = \"x\"\n").unwrap_err();
        assert!(e.contains("regions.moon"), "{e}");
        let e = parse("[default]\nmaster_image = 3\n").unwrap_err();
        assert!(e.contains("default.master_image must be a string"), "{e}");
        let e = parse("[defaults]\n").unwrap_err();
        assert!(e.contains("unknown table"), "{e}");
    }
}
