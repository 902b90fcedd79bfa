//! The integration tests of `elroy-history`, folded into its unit-test executable
//! (`cargo test -p elroy-history --lib [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod recorder;
mod versioned_home;
