//! The integration tests of `elroy-import`. They are compiled into the crate's unit-test
//! executable (`src/lib.rs` includes this file under `#[cfg(test)]`), so the package has one
//! test executable: `cargo test -p elroy-import --lib [FILTER]`. Each file beside this one is a module
//! that uses the crate through its public name `elroy_import`; add new tests to the file of
//! their concern (docs/development.md, "Test layout").

mod chats;
mod database;
