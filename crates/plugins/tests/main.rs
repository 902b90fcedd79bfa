//! The integration tests of `elroy-plugins`. They are compiled into the crate's unit-test
//! executable (`src/lib.rs` includes this file under `#[cfg(test)]`), so the package has one
//! test executable: `cargo test -p elroy-plugins --lib [FILTER]`. Each file beside this one is a module
//! that uses the crate through its public name `elroy_plugins`; add new tests to the file of
//! their concern (docs/development.md, "Test layout").

mod plugins;
mod trust;
