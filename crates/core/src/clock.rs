//! Injectable time: [`Clock`] and [`TimeContext`] (`docs/formats.md#the-configured-time-zone`).

use std::sync::Arc;

use jiff::{Timestamp, ZonedDateTime, tz::TimeZone};

/// A source of "now". Every timestamp, "today", due-time check and relative time goes through one,
/// so tests (and `ELROY_NOW`) can fix time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant (UTC).
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock stopped at one instant (`ELROY_NOW`, tests).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// A clock plus the configured time zone: what "local time" means
/// (`docs/formats.md#the-configured-time-zone`).
#[derive(Debug, Clone)]
pub struct TimeContext {
    /// The source of "now".
    pub clock: Arc<dyn Clock>,
    /// The configured zone (config `timezone`, else `TZ`, else the system zone).
    pub tz: TimeZone,
    /// When a day said without a time starts (config `day_start_time`, default 09:00): the time
    /// of `friday`, `tomorrow`, `every monday` in a due item's `trigger_time`.
    pub day_start: jiff::civil::Time,
}

/// The default [`TimeContext::day_start`]: 09:00.
pub const DEFAULT_DAY_START: jiff::civil::Time = jiff::civil::Time::constant(9, 0, 0, 0);

impl TimeContext {
    /// A context from a clock and a zone.
    pub fn new(clock: Arc<dyn Clock>, tz: TimeZone) -> Self {
        TimeContext {
            clock,
            tz,
            day_start: DEFAULT_DAY_START,
        }
    }

    /// This context with another day start.
    pub fn with_day_start(mut self, day_start: jiff::civil::Time) -> Self {
        self.day_start = day_start;
        self
    }

    /// A context fixed at `now` in `tz` (tests).
    pub fn fixed(now: Timestamp, tz: TimeZone) -> Self {
        TimeContext {
            clock: Arc::new(FixedClock(now)),
            tz,
            day_start: DEFAULT_DAY_START,
        }
    }

    /// Now, as a UTC instant.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Now in the configured zone.
    pub fn now_local(&self) -> ZonedDateTime {
        self.clock.now().to_zoned_datetime(self.tz.clone())
    }

    /// Today's date in the configured zone.
    pub fn today(&self) -> jiff::civil::Date {
        self.now_local().date()
    }
}

impl Default for TimeContext {
    fn default() -> Self {
        TimeContext {
            clock: Arc::new(SystemClock),
            tz: TimeZone::UTC,
            day_start: DEFAULT_DAY_START,
        }
    }
}
