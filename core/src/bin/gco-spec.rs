fn main() {
    std::process::exit(gco_spec::cli::main(std::env::args().skip(1).collect()));
}
