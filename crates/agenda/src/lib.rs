//! # elroy-agenda
//!
//! The agenda store: plain agenda items and due items kept as Elroy-compatible markdown files in
//! `<user home>/agenda/*.md` (`docs/formats.md#agenda-items`), with the behaviour of the 14 agenda
//! and due-item tools (`docs/tools.md#agenda` to `docs/tools.md#due-items`) minus the tool
//! plumbing. No async, no tools, no LLM.
//!
//! - [`AgendaStore`]: every operation, locked and atomic (D12), with name matching (D6).
//! - [`DbIndex`]: the validated index of the files in the `agenda_items` table of `state.db`
//!   (`docs/formats.md#agenda-index`): stable integer ids for recall, and what each file says, so
//!   listings, name lookups and the due check select their rows in SQL, stat only those files and
//!   read only those that changed; the directory is listed only when its signature changed.
//! - [`parse_trigger_time`], [`parse_item_date`] and the display helpers (D7).
//! - [`to_fact`]: the text rendering of an item (`docs/formats.md#renderings`);
//!   [`AgendaStore::due_now`] for the `⏰ DUE ITEM` injection.
//! - Reminders: [`Announcements`] (which timed due items were announced, per
//!   [`Channel`], in `state.db`), [`AgendaStore::next_trigger_after`],
//!   [`AgendaStore::snooze_due_item`], [`AgendaStore::active_items_with_ids`].

mod announcements;
mod db_index;
mod error;
mod item;
mod recurrence;
mod scan;
mod spoken;
mod store;
mod time;

pub use announcements::{Announcements, Channel};
pub use db_index::{DbIndex, IndexEntry, IndexError, indexed_status};
pub use error::AgendaError;
pub use item::{ChecklistEntry, InvalidBoolean, Item, Kind, Status, split_updates, strict_bool};
pub use recurrence::{
    CronProblem, RECURRENCE_KEY, Recurrence, RecurrenceError, Repetition, looks_like_repetition,
    parse_repetition,
};
pub use spoken::DEFAULT_DAY_START;
pub use store::{
    AGENDA_FALLBACK, AgendaStore, DueItem, ItemRef, ListedItem, NewDueItem, Occurrence,
    RecallEntry, UNREADABLE_AGENDA_FILES, to_fact,
};
pub use time::{
    TriggerError, TriggerTimeError, Understood, format_local_with_offset, format_python_utc,
    format_spoken_instant, format_stored_trigger, format_update_stamp, invalid_datetime_message,
    is_elroy_form, parse_absolute_time, parse_item_date, parse_stored_trigger, parse_trigger_time,
    parse_trigger_time_with, understand_trigger,
};
