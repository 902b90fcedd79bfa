//! Benchmarks of the agenda store on a large home (written below).
fn main() {}
