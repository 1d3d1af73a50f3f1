//! Runs the fast path on one input many times, for instruction counts:
//!
//! ```sh
//! cargo build --release -p gco-spec --example profile_fast
//! valgrind --tool=callgrind target/release/examples/profile_fast core/benches/inputs/full_valid.json 1000
//! ```
//!
//! Callgrind's counts are repeatable on a busy machine, unlike wall-clock
//! time; divide the total by the iteration count for a per-call figure.

use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: profile_fast FILE [ITERATIONS]");
    let iterations: usize = args.next().map_or(1000, |n| n.parse().expect("a count"));
    let text = std::fs::read_to_string(&path).expect("a readable file");
    let mut failures = 0;
    for _ in 0..iterations {
        if !matches!(
            gco_spec::validate_mooncake_json(black_box(&text)),
            Ok(Ok(()))
        ) {
            failures += 1;
        }
    }
    println!("{iterations} calls, {failures} not valid");
}
