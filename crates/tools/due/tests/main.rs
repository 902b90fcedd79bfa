//! The integration tests of `elroy-tools-due`: one test executable for the package
//! (`cargo test -p elroy-tools-due --test tools-due [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod effects;
mod natural_times;
mod schema;
