//! The tiny model the tests write themselves: [`elroy_embed::test_support`] (shared with other
//! crates' tests through the cargo feature `test-support`).

pub use elroy_embed::test_support::{DIMS, write_tiny_model};
