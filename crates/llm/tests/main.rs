//! The integration tests of `elroy-llm`: one test executable for the package
//! (`cargo test -p elroy-llm --test llm [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod against_testkit;
mod anthropic;
mod model_files;
mod probe;
