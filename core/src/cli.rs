//! The `gco-spec` command line (see `gco-spec --help`).

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::commands::record_commands;
use crate::deploy::DeployContext;
use crate::diagnostics::Diagnostic;
use crate::document::{Located, record_of_document};
use crate::framework::Frameworks;
use crate::json;
use crate::message_kind::UNREADABLE_FILE;
use crate::output_format::{Checked, OutputFormat, render};
use crate::protocol;
use crate::record::Record;
use crate::region::RegionContext;

/// gco-spec: check GCO inference endpoint specs.
#[derive(Parser)]
#[command(name = "gco-spec", arg_required_else_help = true)]
struct Cli {
    /// Answer the reference oracle's JSON-lines protocol on stdin and stdout
    /// (ops validate, author_byte_size, build).
    #[arg(long)]
    jsonl: bool,

    /// The frameworks the team's GCO accepts, comma-separated (a GCO older
    /// than its SGLang release: vllm,tgi). Every command but --jsonl checks
    /// with them.
    #[arg(
        long,
        global = true,
        env = "GCO_FRAMEWORKS",
        value_name = "LIST",
        default_value_t = Frameworks::CURRENT
    )]
    frameworks: Frameworks,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Check each file ('-' reads stdin): a spec, a deploy request, an
    /// endpoint record or a bare mooncake block. Prints each problem (by
    /// default FILE:LINE:COL: path: message); exits 1 when any file has an
    /// error (or, with --warnings-as-errors, a warning).
    Validate {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// How to print the problems: for people (text), or for CI: GitHub
        /// annotations, GitLab Code Quality, SARIF 2.1.0, JUnit XML, or
        /// JSON as the API gives them with their ranges.
        #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
        output_format: OutputFormat,
        /// Fail the run (exit 1) on warnings too.
        #[arg(long)]
        warnings_as_errors: bool,
    },
    /// What GCO's monitor creates for the endpoint (a deploy request or a
    /// record) in a region, or in each target region, as JSON.
    Plan {
        /// A deploy request or an endpoint record ('-' reads stdin).
        file: String,
        #[arg(long)]
        region: Option<String>,
    },
    /// The Kubernetes objects GCO's monitor applies for the endpoint in a
    /// region, as one v1 List. The flags but --output stand for the
    /// region's monitor settings; a default used is a leading # comment
    /// (with JSON, a line on stderr).
    Manifests(ManifestsArgs),
    /// The `gco inference` commands that produce the same endpoint, one per
    /// line; what they cannot express is reported on stderr.
    Cli {
        /// A deploy request or an endpoint record ('-' reads stdin).
        file: String,
    },
    /// The language server, over stdin and stdout: diagnostics as you type,
    /// hover and completion, for files named *.gco.json (and any the client
    /// sends as language gco-json).
    #[cfg(feature = "lsp")]
    Lsp,
}

#[derive(Args)]
struct ManifestsArgs {
    /// A deploy request or an endpoint record ('-' reads stdin).
    file: String,
    #[arg(short, long, value_enum, default_value_t = Output::Yaml)]
    output: Output,
    #[command(flatten)]
    region: RegionContext,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Yaml,
    Json,
}

/// Runs the tool on the process's arguments. Usage errors go to stderr with
/// exit code 2; a file with an error exits 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let frameworks = &cli.frameworks;
    match cli.command {
        None if cli.jsonl => jsonl(),
        None => Cli::command()
            .error(
                ErrorKind::MissingSubcommand,
                "a command or --jsonl is required",
            )
            .exit(),
        // Not clap's `args_conflicts_with_subcommands`: that would refuse
        // --frameworks before the command too.
        Some(_) if cli.jsonl => Cli::command()
            .error(ErrorKind::ArgumentConflict, "--jsonl takes no command")
            .exit(),
        Some(Command::Validate {
            files,
            output_format,
            warnings_as_errors,
        }) => validate_files(&files, frameworks, output_format, warnings_as_errors),
        Some(Command::Plan { file, region }) => plan_file(&file, region.as_deref(), frameworks),
        Some(Command::Manifests(args)) => manifests_file(&args, frameworks),
        Some(Command::Cli { file }) => cli_file(&file, frameworks),
        #[cfg(feature = "lsp")]
        Some(Command::Lsp) => crate::lsp::run(*frameworks),
    }
}

fn jsonl() -> ExitCode {
    let stdin = io::stdin().lock();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in stdin.split(b'\n') {
        let Ok(line) = line else {
            return ExitCode::FAILURE;
        };
        let line = String::from_utf8_lossy(&line);
        if protocol::is_blank(&line) {
            continue;
        }
        let answer = protocol::answer_line(&line);
        // One flushed line per request, as the oracle does: callers may
        // interleave writes and reads.
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn validate_files(
    files: &[String],
    frameworks: &Frameworks,
    format: OutputFormat,
    warnings_as_errors: bool,
) -> ExitCode {
    let checked: Vec<Checked> = files
        .iter()
        .map(|file| match read_bytes(file) {
            Ok(source) => Checked::new(
                file.clone(),
                crate::document::check_document_source(&source, frameworks),
            ),
            Err(e) => Checked {
                file: file.clone(),
                diagnostics: vec![(
                    Located {
                        diagnostic: Diagnostic::error("", e.to_string()),
                        range: None,
                    },
                    UNREADABLE_FILE,
                )],
            },
        })
        .collect();
    print!("{}", render(format, &checked, warnings_as_errors));
    if checked.iter().any(|c| c.fails(warnings_as_errors)) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A file's bytes (`-`: stdin).
fn read_bytes(file: &str) -> io::Result<Vec<u8>> {
    if file == "-" {
        let mut bytes = Vec::new();
        io::stdin().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(file)
    }
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

fn plan_file(file: &str, region: Option<&str>, frameworks: &Frameworks) -> ExitCode {
    let Some(record) = read_record(file, region, frameworks) else {
        return ExitCode::FAILURE;
    };
    match crate::plan::plans_value(&record, region) {
        Ok(v) => {
            println!("{}", v.to_json_pretty());
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{file}: {}: {}", e.path, e.message);
            ExitCode::FAILURE
        }
    }
}

fn cli_file(file: &str, frameworks: &Frameworks) -> ExitCode {
    let Some(record) = read_record(file, None, frameworks) else {
        return ExitCode::FAILURE;
    };
    let commands = record_commands(&record);
    for line in &commands.lines {
        println!("{line}");
    }
    for note in &commands.notes {
        eprintln!("{file}: {note}");
    }
    ExitCode::SUCCESS
}

fn manifests_file(args: &ManifestsArgs, frameworks: &Frameworks) -> ExitCode {
    let file = &args.file;
    let Some(record) = read_record(file, Some(&args.region.region), frameworks) else {
        return ExitCode::FAILURE;
    };
    match crate::manifests::manifests(&record, &args.region) {
        Ok(m) => {
            match args.output {
                Output::Json => {
                    for note in &m.notes {
                        eprintln!("{file}: note: {note}");
                    }
                    println!("{}", m.to_json());
                }
                Output::Yaml => print!("{}", m.to_yaml()),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{file}: {}: {}", e.path, e.message);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
