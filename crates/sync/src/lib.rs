//! `elroy sync`: one elroy home on several machines, through any git remote (issue 17).
//!
//! The versioned home (`elroy-history`) is already a git repository; syncing is fetch, merge, index
//! update, push. What git cannot do for elroy is merge two versions of a *store file*: this crate merges
//! them by their structure ([`merge`]) and never writes conflict markers into a store file. What cannot be
//! merged by those rules is kept in a sibling file that the stores ignore and `elroy doctor` lists.

pub mod merge;
