//! The integration tests of `elroy-tools-feature-requests`: one test executable for the package
//! (`cargo test -p elroy-tools-feature-requests --test tools-feature-requests [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod behaviour;
mod common;
mod fixture;
mod oracle_recordings;
mod schemas;
