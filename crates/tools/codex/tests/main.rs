//! The integration tests of `elroy-tools-codex`: one test executable for the package
//! (`cargo test -p elroy-tools-codex --test tools-codex [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod codex_tools;
mod common;
mod contrib_repo;
