//! The integration tests of `elroy-memory`: one test executable for the package
//! (`cargo test -p elroy-memory --test memory [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod atomic_writes;
mod common;
mod consolidation_input;
mod fixture;
mod keyword_leg;
mod reactivation;
mod recall_period;
mod recall_quality;
mod store;
mod warm_index;
