//! The integration tests of `elroy-tools-fs`: run in the package's unit-test executable
//! (`cargo test -p elroy-tools-fs --lib [FILTER]`), so the package builds one test executable. Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod spec_examples;
