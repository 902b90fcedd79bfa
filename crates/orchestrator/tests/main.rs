//! The integration tests of `elroy-orchestrator`: one test executable for the package
//! (`cargo test -p elroy-orchestrator --test orchestrator [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod turns;
