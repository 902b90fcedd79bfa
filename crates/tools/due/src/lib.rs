//! # elroy-tools-due
//!
//! The due-item tools of `docs/tools.md#due-items` over [`elroy_agenda::AgendaStore`]:
//! `create_due_item` (pins the new item, D13), `complete_due_item`, `delete_due_item` (unpins),
//! `print_due_item`, `rename_due_item` and `update_due_item_text`, and elroy's own
//! `list_due_items`. Schemas and success strings are
//! Elroy 0.5.0's (K1, K3); trigger times accept relative forms and are shown in local time with
//! the offset (D7).

mod tools;

use elroy_core::{ToolFamily, ToolRegistry, sync_tool};

pub use tools::{
    CloseDueItemArgs, CompleteDueItem, CreateDueItem, CreateDueItemArgs, DEFAULT_LIST_LIMIT,
    DeleteDueItem, DeleteDueItemArgs, DueNameArgs, ListDueItems, ListDueItemsArgs, PrintDueItem,
    RenameDueItem, RenameDueItemArgs, UpdateDueItemText, UpdateDueItemTextArgs,
};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Due items",
    guide: "Reminders that come back by themselves: at a time (`trigger_time`, in your time \
            zone), in a situation (`trigger_context`, matched against the conversation), or \
            both. They live in `agenda/` beside the agenda items and are shown to the model \
            when due; `elroy remind` announces timed ones on the command line.\n\n\
            **`trigger_time`, once.** Elroy 0.5.0's own forms keep Elroy's meaning: \
            `2026-12-02 09:00`, `2026-12-02 09:00:30`, ISO 8601 with or without an offset, and a \
            bare `2026-12-02`, which is midnight. elroy also reads times as people say them \
            (times without an offset are in the configured `timezone`):\n\n\
            - relative: `in 2 hours`, `in 1 hour and 30 minutes`, `in half an hour`, `+45m`, \
            `1h30m`, `in 3 days`, and `in 1 month` / `in 2 years` in the calendar (January 31 + \
            1 month is February 28, 10:00 stays 10:00 across a DST change);\n\
            - a day alone, at `day_start_time` (default 09:00): `tomorrow`, `friday`, `on \
            friday`, `next friday`, `next week` (next Monday), `march 20`, `20 march 2026`, \
            `mar 20th, 2026`, `the 3rd of april` (a date without a year is the next such date);\n\
            - a day and a time: `tomorrow 9am`, `tomorrow at 5:30 pm`, `friday 17:00`, `9am on \
            wednesday`, `march 20 9am`, `20 march 2026 09:00` (a bare hour only after `at`);\n\
            - parts of the day: `tomorrow morning` (the day start), `afternoon` (14:00), \
            `evening` (18:00), `end of day` (17:00), `noon`, `midnight` (the coming one);\n\
            - `tonight` (20:00) and `this evening` (18:00) mean 17:00 to 04:59: `tonight at 9` \
            is 21:00, `tonight at 12` the coming midnight, `tonight at 1` 01:00 after it, and \
            `tonight at 9am` an error.\n\n\
            A weekday is the next such day, today included; `next` skips today. A time earlier \
            today is an error that says so; it is never moved to tomorrow.\n\n\
            **`trigger_time`, repeating.** The same argument takes a repetition: a phrase \
            (`every day at 8`, `daily at 8pm`, `every weekday at 9am`, `weekdays at 9`, `every \
            monday and thursday at 18:30`, `every 2 weeks on monday at 10`, `every month on the \
            15th at 9`, `first monday of the month at 10am`, `last friday of every month at \
            5pm`, `every year on march 3 at 9`, `every 30 minutes`, each with an optional \
            `until april 30` or `for 5 times`; without a time at the day start), a five-field \
            cron expression (`0 9 * * 1-5`; day of month and day of week not both), or an RFC \
            5545 line (`RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO`). Occurrences keep their wall \
            time across DST (09:00 stays 09:00). The file stays an Elroy 0.5.0 one-off at the \
            next occurrence: `trigger_datetime` is always that occurrence, and the rule is in \
            one more front-matter key, `recurrence`, one line of RFC 5545 text in the item's \
            own zone with its first wall time: `recurrence: DTSTART;TZID=Europe/Berlin:20261201T090000 \
            RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR` (keys stay sorted; a zone without an IANA \
            name is written `DTSTART:…` and read in the configured zone; `UNTIL` is UTC). \
            `elroy remind` announces each occurrence once and moves `trigger_datetime` on (after \
            a machine was off, one line with the count); `complete_due_item` completes the \
            occurrence nearest to now and names the next; `delete_due_item` (or `elroy due done \
            NAME --series`) ends the series; `elroy due snooze` moves only this occurrence. \
            `print_due_item` adds `Repeats: every weekday at 09:00`. An edit by Elroy 0.5.0 \
            rewrites the front matter with its own keys and so drops the rule.\n\n\
            When `trigger_time` was not one of Elroy's forms, the reply keeps Elroy's sentence \
            and adds what was understood: `Timed due item 'a' has been created for tomorrow 9am \
            (Wed 2026-03-18 09:00 +01:00).`, for a repetition with its rule in words.",
};

/// Registers the due-item tools, in the order `docs/tools.md` lists them.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(CreateDueItem))
        .register(sync_tool(ListDueItems))
        .register(sync_tool(PrintDueItem))
        .register(sync_tool(RenameDueItem))
        .register(sync_tool(UpdateDueItemText))
        .register(sync_tool(CompleteDueItem))
        .register(sync_tool(DeleteDueItem));
}
