//! The integration tests of `elroy-llm`. They are compiled into the crate's unit-test
//! executable (`src/lib.rs` includes this file under `#[cfg(test)]`), so the package has one
//! test executable: `cargo test -p elroy-llm --lib [FILTER]`. Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod against_testkit;
mod anthropic;
mod model_files;
mod probe;
