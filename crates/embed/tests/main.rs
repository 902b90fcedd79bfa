//! The integration tests of `elroy-embed`. They are compiled into the crate's unit-test
//! executable (`src/lib.rs` includes this file under `#[cfg(test)]`), so the package has one
//! test executable: `cargo test -p elroy-embed --lib [FILTER]`.

mod common;
mod identity;
mod load;
mod reference;
