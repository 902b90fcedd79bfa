//! The driver shared by the fuzz targets in `tests/`: runs a proptest strategy for a number of
//! cases or a number of seconds, fresh random seeds each round, and reports what it ran.
//!
//! - `ELROY_FUZZ_CASES` (default 256): stop after this many cases.
//! - `ELROY_FUZZ_SECONDS` (default unset): when set, run until this many seconds have passed
//!   (the case count is then unbounded).
//! - `ELROY_FUZZ_SHRINK_ITERS` (default 100,000): how hard a failure is shrunk.
//!
//! A failure panics with the shrunk (minimal) input, to be committed as a regression test in the
//! owning crate.

use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

/// Cases per round: each round is one `TestRunner` with its own random seed.
const ROUND: u32 = 2_000;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Runs `test` over inputs from `strategy` (see the crate docs for the budget) and prints
/// `target: N cases in S s`.
///
/// # Panics
/// When `test` fails or panics for some input: the message has the shrunk input.
pub fn fuzz<S, F>(target: &str, strategy: S, test: F)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError>,
{
    let seconds = env_u64("ELROY_FUZZ_SECONDS");
    let max_cases = if seconds.is_some() {
        u64::MAX
    } else {
        env_u64("ELROY_FUZZ_CASES").unwrap_or(256)
    };
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let start = Instant::now();
    let mut done: u64 = 0;
    while done < max_cases && deadline.is_none_or(|d| Instant::now() < d) {
        let cases = u32::try_from((max_cases - done).min(u64::from(ROUND))).unwrap_or(ROUND);
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: u32::try_from(env_u64("ELROY_FUZZ_SHRINK_ITERS").unwrap_or(100_000))
                .unwrap_or(u32::MAX),
            ..Config::default()
        });
        match runner.run(&strategy, &test) {
            Ok(()) => done += u64::from(cases),
            Err(TestError::Fail(reason, input)) => {
                panic!("{target}: failed after {done}+ cases: {reason}\nminimal input: {input:#?}")
            }
            Err(TestError::Abort(reason)) => panic!("{target}: aborted: {reason}"),
        }
    }
    println!(
        "{target}: {done} cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
