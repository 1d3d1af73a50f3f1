//! The `gco-spec` command line (see `gco-spec --help`).

use std::io::{self, BufRead, Read, Write};

use crate::commands::record_commands;
use crate::deploy::DeployContext;
use crate::document::record_of_document;
use crate::framework::Frameworks;
use crate::json;
use crate::protocol;
use crate::record::Record;
use crate::region::RegionContext;

const USAGE: &str = "\
gco-spec: check GCO inference endpoint specs

USAGE:
    gco-spec validate FILE...   check each file ('-' reads stdin): a spec, a
                                deploy request, an endpoint record or a bare
                                mooncake block. Prints FILE: path: message per
                                problem; exits 1 when any file has an error.
    gco-spec plan FILE [--region R]
                                what GCO's monitor creates for the endpoint
                                (a deploy request or a record) in region R,
                                or in each target region, as JSON
    gco-spec manifests FILE --region R [-o yaml|json] [--cluster-name N]
             [--regional-bucket B] [--metadata-server URL]
             [--master-address HOST:PORT] [--master-image IMG]
             [--project-name P]
                                the Kubernetes objects GCO's monitor applies
                                for the endpoint in region R, as one v1 List
                                (YAML by default). The flags stand for the
                                region's monitor settings; a default used is
                                a leading # comment (JSON: on stderr)
    gco-spec cli FILE           the `gco inference` commands that produce the
                                same endpoint, one per line; what they cannot
                                express is reported on stderr
    Every command but --jsonl takes --frameworks LIST (default: the env
    GCO_FRAMEWORKS, else vllm,sglang): the frameworks the team's GCO
    accepts, comma-separated (a GCO older than its SGLang release: vllm,tgi).

    gco-spec --jsonl            answer the reference oracle's JSON-lines
                                protocol on stdin/stdout (ops validate,
                                author_byte_size, build)
    gco-spec --help             this text
";

/// Runs the tool; returns the exit code.
pub fn main(mut args: Vec<String>) -> i32 {
    let frameworks = match take_frameworks(&mut args) {
        Ok(frameworks) => frameworks,
        Err(message) => {
            eprintln!("gco-spec: --frameworks: {message}");
            return 2;
        }
    };
    let fw = &frameworks;
    match args.first().map(String::as_str) {
        Some("--jsonl") => jsonl(),
        Some("validate") if args.len() > 1 => validate_files(&args[1..], fw),
        Some("plan") => match args[1..] {
            [ref file] => plan_file(file, None, fw),
            [ref file, ref flag, ref region] | [ref flag, ref region, ref file]
                if flag == "--region" =>
            {
                plan_file(file, Some(region), fw)
            }
            _ => usage_error(),
        },
        Some("manifests") => match ManifestsArgs::parse(&args[1..]) {
            Ok(parsed) => manifests_file(&parsed, fw),
            Err(message) => {
                eprintln!("gco-spec manifests: {message}");
                usage_error()
            }
        },
        Some("cli") if args.len() == 2 => cli_file(&args[1], fw),
        Some("--help" | "-h" | "help") => {
            print!("{USAGE}");
            0
        }
        _ => usage_error(),
    }
}

/// Removes `--frameworks LIST` (or `--frameworks=LIST`) from `args`; the
/// list given, else `GCO_FRAMEWORKS`, else GCO's current one.
fn take_frameworks(args: &mut Vec<String>) -> Result<Frameworks, String> {
    let mut given = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--frameworks" {
            if i + 1 >= args.len() {
                return Err("needs a value, e.g. vllm,sglang".into());
            }
            given = Some(args.remove(i + 1));
            args.remove(i);
        } else if let Some(list) = args[i].strip_prefix("--frameworks=") {
            given = Some(list.to_owned());
            args.remove(i);
        } else {
            i += 1;
        }
    }
    match given.or_else(|| std::env::var("GCO_FRAMEWORKS").ok()) {
        Some(list) => Frameworks::parse_list(&list).map_err(|e| e.to_string()),
        None => Ok(Frameworks::CURRENT),
    }
}

fn usage_error() -> i32 {
    eprint!("{USAGE}");
    2
}

fn jsonl() -> i32 {
    let stdin = io::stdin().lock();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in stdin.split(b'\n') {
        let Ok(line) = line else { return 1 };
        let line = String::from_utf8_lossy(&line);
        if protocol::is_blank(&line) {
            continue;
        }
        let answer = protocol::answer_line(&line);
        // One flushed line per request, as the oracle does: callers may
        // interleave writes and reads.
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            return 1;
        }
    }
    0
}

fn validate_files(files: &[String], frameworks: &Frameworks) -> i32 {
    let mut failed = false;
    for file in files {
        let Some(text) = read(file) else {
            failed = true;
            continue;
        };
        let report = crate::document::check_document_text(&text, frameworks);
        for d in &report.diagnostics {
            println!("{file}: {d}");
        }
        failed |= !report.is_ok();
    }
    i32::from(failed)
}

/// A file's text (`-`: stdin); a read error is printed.
fn read(file: &str) -> Option<String> {
    let text = if file == "-" {
        let mut s = String::new();
        io::stdin().read_to_string(&mut s).map(|_| s)
    } else {
        std::fs::read_to_string(file)
    };
    text.map_err(|e| println!("{file}: {e}")).ok()
}

/// The record a file stands for; its problems are printed.
fn read_record(file: &str, region: Option<&str>, frameworks: &Frameworks) -> Option<Record> {
    let text = read(file)?;
    let regions = region.map(|r| vec![r.to_owned()]);
    // A request naming no regions is planned for the one asked about.
    let ctx = DeployContext {
        deployed_regions: regions.as_deref(),
        frameworks: *frameworks,
        ..DeployContext::default()
    };
    let parsed = json::parse(&text)
        .map_err(|e| println!("{file}: invalid JSON: {e}"))
        .ok()?;
    match record_of_document(&parsed, &ctx) {
        Ok(record) => Some(record),
        Err(report) => {
            for d in report.errors() {
                println!("{file}: {d}");
            }
            None
        }
    }
}

fn plan_file(file: &str, region: Option<&str>, frameworks: &Frameworks) -> i32 {
    let Some(record) = read_record(file, region, frameworks) else {
        return 1;
    };
    let plans = crate::plan::plans_value(&record, region);
    match plans {
        Ok(v) => {
            println!("{}", v.to_json_pretty());
            0
        }
        Err(e) => {
            println!("{file}: {}: {}", e.path, e.message);
            1
        }
    }
}

fn cli_file(file: &str, frameworks: &Frameworks) -> i32 {
    let Some(record) = read_record(file, None, frameworks) else {
        return 1;
    };
    let commands = record_commands(&record);
    for line in &commands.lines {
        println!("{line}");
    }
    for note in &commands.notes {
        eprintln!("{file}: {note}");
    }
    0
}

/// The arguments of `gco-spec manifests`.
struct ManifestsArgs {
    file: String,
    json: bool,
    ctx: RegionContext,
}

impl ManifestsArgs {
    fn parse(args: &[String]) -> Result<ManifestsArgs, String> {
        let mut file = None;
        let mut json = false;
        let mut region = None;
        let mut ctx = RegionContext::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let mut value = || {
                rest.next()
                    .cloned()
                    .ok_or_else(|| format!("{arg} needs a value"))
            };
            match arg.as_str() {
                "--region" => region = Some(value()?),
                "-o" | "--output" => {
                    json = match value()?.as_str() {
                        "yaml" => false,
                        "json" => true,
                        other => return Err(format!("-o must be yaml or json, got {other:?}")),
                    }
                }
                "--cluster-name" => ctx.cluster_name = Some(value()?),
                "--regional-bucket" => ctx.regional_bucket = Some(value()?),
                "--metadata-server" => ctx.metadata_server = Some(value()?),
                "--master-address" => ctx.master_address = Some(value()?),
                "--master-image" => ctx.master_image = Some(value()?),
                "--project-name" => ctx.project_name = Some(value()?),
                flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
                path if file.is_none() => file = Some(path.to_owned()),
                extra => return Err(format!("unexpected argument {extra:?}")),
            }
        }
        ctx.region = region.ok_or("--region is required")?;
        Ok(ManifestsArgs {
            file: file.ok_or("FILE is required")?,
            json,
            ctx,
        })
    }
}

fn manifests_file(args: &ManifestsArgs, frameworks: &Frameworks) -> i32 {
    let file = &args.file;
    let Some(record) = read_record(file, Some(&args.ctx.region), frameworks) else {
        return 1;
    };
    match crate::manifests::manifests(&record, &args.ctx) {
        Ok(m) if args.json => {
            for note in &m.notes {
                eprintln!("{file}: note: {note}");
            }
            println!("{}", m.to_json());
            0
        }
        Ok(m) => {
            print!("{}", m.to_yaml());
            0
        }
        Err(e) => {
            println!("{file}: {}: {}", e.path, e.message);
            1
        }
    }
}
