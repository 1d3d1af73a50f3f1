//! The `gco-spec` command line (see `gco-spec --help`).

use std::io::{self, BufRead, Read, Write};

use crate::protocol;

const USAGE: &str = "\
gco-spec: check GCO inference endpoint specs

USAGE:
    gco-spec validate FILE...   check each file ('-' reads stdin): a spec, a
                                deploy request, an endpoint record or a bare
                                mooncake block. Prints FILE: path: message per
                                problem; exits 1 when any file has an error.
    gco-spec --jsonl            answer the reference oracle's JSON-lines
                                protocol on stdin/stdout (ops validate,
                                author_byte_size, build)
    gco-spec --help             this text
";

/// Runs the tool; returns the exit code.
pub fn main(args: Vec<String>) -> i32 {
    match args.first().map(String::as_str) {
        Some("--jsonl") => jsonl(),
        Some("validate") if args.len() > 1 => validate_files(&args[1..]),
        Some("--help" | "-h" | "help") => {
            print!("{USAGE}");
            0
        }
        _ => {
            eprint!("{USAGE}");
            2
        }
    }
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

fn validate_files(files: &[String]) -> i32 {
    let mut failed = false;
    for file in files {
        let text = if file == "-" {
            let mut s = String::new();
            io::stdin().read_to_string(&mut s).map(|_| s)
        } else {
            std::fs::read_to_string(file)
        };
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                println!("{file}: {e}");
                failed = true;
                continue;
            }
        };
        let report = crate::document::check_document_text(&text);
        for d in &report.diagnostics {
            println!("{file}: {d}");
        }
        failed |= !report.is_ok();
    }
    i32::from(failed)
}
