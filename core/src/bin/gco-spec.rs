fn main() -> std::process::ExitCode {
    gco_spec::cli::main()
}
