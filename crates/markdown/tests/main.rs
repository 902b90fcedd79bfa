//! The integration tests of `elroy-markdown`, folded into its unit-test executable
//! (`cargo test -p elroy-markdown --lib [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod fuzz_regressions;
