//! The integration tests of `elroy-tools-builtin`: one test executable for the package
//! (`cargo test -p elroy-tools-builtin --test tools-builtin [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod golden_schema;
mod restart;
mod session;
