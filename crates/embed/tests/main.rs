//! The integration tests of `elroy-embed` (`cargo test -p elroy-embed --test embed`).

mod common;
mod load;
mod reference;
