//! The integration tests of `elroy-tools-user`: one test executable for the package
//! (`cargo test -p elroy-tools-user --test tools-user [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod user_tools;
