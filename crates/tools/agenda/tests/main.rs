//! The integration tests of `elroy-tools-agenda`: one test executable for the package
//! (`cargo test -p elroy-tools-agenda --test tools-agenda [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod common;
mod files;
mod fixture_home;
mod oracle_recordings;
mod replay;
mod robustness;
mod schema;
