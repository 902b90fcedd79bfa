//! The integration tests of `elroy-config`, folded into its unit-test executable
//! (`cargo test -p elroy-config --lib [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod docs;
