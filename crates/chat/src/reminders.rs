//! Reminders in the plain REPL: a due item that comes due while elroy waits
//! for input is printed above the prompt, without disturbing what is being typed (rustyline's
//! external printer redraws the prompt and the typed text below the printed line).
//!
//! The mechanism is independent of where reminders come from: a [`ReminderSource`]
//! (elroy-commands, the one the full-screen interface polls too) is asked every
//! [`POLL_INTERVAL`] for the items to announce; their lines are printed only while the editor
//! waits for input (during a turn the model receives due items itself,
//! `docs/behaviour.md#due-items-in-a-turn`). The source is [`InterfaceReminders`] (elroy-commands):
//! claimed in `state.db` on the `interface` channel, so an item is printed once across every
//! interface open on the home.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use elroy_commands::{ChatSession, InterfaceReminders, ReminderSource};
use elroy_core::TimeContext;

use crate::repl::SharedPrinter;

/// How often the source is asked.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Stops the reminder thread when dropped.
pub struct Reminders {
    stop: Arc<AtomicBool>,
}

impl Drop for Reminders {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Starts a thread that asks `source` every `interval` (at `time`'s clock) and hands each
/// announcement's line to `print` — only while `at_prompt` is true (lines found meanwhile wait
/// for the next prompt). Stops when the returned handle is dropped.
pub fn start(
    source: Box<dyn ReminderSource>,
    time: TimeContext,
    at_prompt: Arc<AtomicBool>,
    mut print: Box<dyn FnMut(&str) + Send>,
    interval: Duration,
) -> Reminders {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let spawned = std::thread::Builder::new()
        .name("elroy-reminders".into())
        .spawn(move || {
            let mut waiting: Vec<String> = Vec::new();
            while !stopped.load(Ordering::SeqCst) {
                waiting.extend(source.take_due(time.now()).into_iter().map(|a| a.line));
                if at_prompt.load(Ordering::SeqCst) {
                    for line in waiting.drain(..) {
                        print(&line);
                    }
                }
                std::thread::sleep(interval);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("reminders are off: cannot start their thread: {e}");
    }
    Reminders { stop }
}

/// The reminders of the chat's home, printed through `printer` while `at_prompt`; `None` when
/// standard input or output is not a terminal (a piped chat gets due items in its turns only).
pub(crate) fn start_in_session(
    chat: &ChatSession,
    at_prompt: &Arc<AtomicBool>,
    printer: &SharedPrinter,
) -> Option<Reminders> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    let source = InterfaceReminders::open(chat, chat.runtime().time.now())?;
    let printer = printer.clone();
    Some(start(
        Box::new(source),
        chat.runtime().time.clone(),
        Arc::clone(at_prompt),
        Box::new(move |line| printer.print(line)),
        POLL_INTERVAL,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;
    use std::time::Instant;

    use elroy_runtime::reminders::Announcement;

    use super::*;

    /// A source that yields its scripted lines one call at a time.
    struct Fake(Arc<Mutex<Vec<Vec<String>>>>);

    impl ReminderSource for Fake {
        fn take_due(&self, _now: jiff::Timestamp) -> Vec<Announcement> {
            let mut script = self.0.lock().unwrap();
            if script.is_empty() {
                return Vec::new();
            }
            script.remove(0).into_iter().map(announcement).collect()
        }
    }

    fn announcement(line: String) -> Announcement {
        let item = elroy_agenda::DueItem {
            id: 0,
            name: line.clone(),
            stem: line.clone(),
            trigger_datetime: None,
            trigger_context: None,
            trigger_raw: None,
            text: String::new(),
            recurrence: None,
        };
        Announcement {
            item,
            title: line.clone(),
            body: String::new(),
            when: String::new(),
            occurrences: 1,
            line,
        }
    }

    fn wait_for(printed: &Arc<Mutex<Vec<String>>>, count: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while printed.lock().unwrap().len() < count && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        printed.lock().unwrap().clone()
    }

    /// Lines are printed only while the editor waits for input, each once, in order; lines that
    /// came due during a turn wait for the next prompt.
    #[test]
    fn prints_only_at_the_prompt_and_once() {
        let script = Arc::new(Mutex::new(vec![
            vec!["⏰ 09:00 first".to_owned()],
            vec![],
            vec!["⏰ 09:01 second".to_owned()],
        ]));
        let printed = Arc::new(Mutex::new(Vec::new()));
        let at_prompt = Arc::new(AtomicBool::new(false));
        let sink = Arc::clone(&printed);
        let handle = start(
            Box::new(Fake(Arc::clone(&script))),
            TimeContext::fixed(jiff::Timestamp::UNIX_EPOCH, jiff::tz::TimeZone::UTC),
            Arc::clone(&at_prompt),
            Box::new(move |line| sink.lock().unwrap().push(line.to_owned())),
            Duration::from_millis(5),
        );
        // Not at the prompt: the source is read, nothing is printed.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !script.lock().unwrap().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(printed.lock().unwrap().is_empty());
        at_prompt.store(true, Ordering::SeqCst);
        assert_eq!(wait_for(&printed, 2), ["⏰ 09:00 first", "⏰ 09:01 second"]);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(printed.lock().unwrap().len(), 2);
        drop(handle);
    }
}
