//! The `elroy` binary. All of it lives in the `elroy-cli` crate.

fn main() -> std::process::ExitCode {
    elroy_cli::main()
}
