//! The integration tests of `elroy-agenda`: one test executable for the package
//! (`cargo test -p elroy-agenda --test agenda [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod atomic_writes;
mod concurrency;
mod db_index;
mod recurrence;
mod scan;
mod spoken;
mod warm_index;
