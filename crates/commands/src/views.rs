//! Front-end-neutral views: what a person reads about due items and the agenda, built once and
//! only drawn by each front end (`elroy due` and `elroy agenda` as tables, `/due` and `/agenda`
//! as markdown, the full-screen interface's sidebar as rows).
//!
//! - [`due_time`] is the one way a due time is written where a person reads it (the
//!   `create_due_item` confirmation's `Sun 2026-12-06 09:00 +00:00`); [`relative`] the distance
//!   to it (`in 2 h`, `overdue 35 min`).
//! - [`due_list`]: the active due items, timed ones by trigger time (then name), then contextual
//!   ones by name, with the triggers elroy cannot read named.
//! - [`Days`]: the day words a person types (`today`, `tomorrow`, `yesterday`, `week`, a date);
//!   [`agenda_days`]: the plain agenda items of those days.

mod agenda;
mod due;
mod time;

pub use agenda::{AgendaDays, AgendaEntry, LatestUpdate, agenda_days};
pub use due::{ContextDue, DueList, TimedDue, UnreadableTrigger, due_list};
pub use time::{Days, DaysError, due_time, one_line, relative};
