//! The integration tests of `elroy-tools-notebook`: one test executable for the package
//! (`cargo test -p elroy-tools-notebook --test tools-notebook [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod common;
mod concurrency;
mod pinned_cases;
mod schema;
mod soul;
