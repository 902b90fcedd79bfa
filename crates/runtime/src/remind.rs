//! `elroy remind [--watch]`'s work (the command line only parses its flag): announces every
//! timed due item whose trigger time has passed and that `elroy remind` has not announced yet,
//! once each (claimed in `state.db` first, so any number of concurrent runs announce an item
//! once), then exits; with `--watch` it keeps running and announces each item when it comes due.
//!
//! An announcement is a line on stdout (`⏰ 09:00 Call the dentist — Ask about the invoice`), a
//! terminal bell when stdout is a terminal, and, when configured, `notify_command` run with the
//! title and the body as its last two arguments (no shell).
//!
//! The watcher sleeps until the next trigger but at most [`POLL`], then looks again with the wall
//! clock: items added, changed, snoozed or deleted by any process (or by hand) are seen within
//! [`POLL`], and a trigger passed while the machine slept fires on wake, once. SIGINT and SIGTERM
//! end it with status 0.

use std::io::IsTerminal;
use std::process::{Command, Stdio};
use std::time::Duration;

use elroy_agenda::AgendaError;
use elroy_config::Config;

use crate::output;
use crate::reminders::{Announcement, Channel, Reminders};
use crate::{Runtime, RuntimeError};

/// The longest the watcher sleeps before looking at the agenda again: an item added or moved by
/// another process (or a hand edit) is seen within this. A look is cheap (the agenda store's scan
/// re-reads only changed files; one `state.db` query per due item).
pub const POLL: Duration = Duration::from_secs(1);

/// How long `notify_command` may run before it is killed.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `elroy remind` stopped. Each variant keeps its source.
#[derive(Debug, thiserror::Error)]
pub enum RemindError {
    /// `notify_command` does not split into words (an unclosed quote).
    #[error("notify_command: cannot split {0:?} into words")]
    NotifyCommand(String),
    /// The home could not be opened.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The due items or the announcement ledger could not be read or written.
    #[error(transparent)]
    Agenda(#[from] AgendaError),
    /// Standard output is closed or failing (see [`crate::output`]).
    #[error(transparent)]
    Output(#[from] output::OutputError),
    /// The watcher could not listen for a signal (`SIGTERM` or `SIGINT`).
    #[error("cannot watch for {0}: {1}")]
    Signal(&'static str, std::io::Error),
    /// The async runtime of the watcher could not start.
    #[error("cannot start the async runtime: {0}")]
    AsyncRuntime(std::io::Error),
}

/// Announces what is due now, once (`watch` false), or keeps announcing each item when it comes
/// due until SIGINT or SIGTERM (`watch` true); the home's opening warnings go to stderr.
///
/// # Errors
/// [`RemindError::NotifyCommand`] before anything is opened; [`RemindError::Runtime`] when the
/// home or its reminders cannot be opened; once: [`RemindError::Agenda`] and
/// [`RemindError::Output`] from the announcing; watching: [`RemindError::Signal`] and
/// [`RemindError::AsyncRuntime`] (the watcher reports the other failures as warnings and looks
/// again).
pub fn run(config: Config, watch_on: bool) -> Result<(), RemindError> {
    let notify = match config.settings.notify_command.as_deref() {
        Some(command) if !command.trim().is_empty() => Some(
            shlex::split(command)
                .filter(|words| !words.is_empty())
                .ok_or_else(|| RemindError::NotifyCommand(command.to_owned()))?,
        ),
        _ => None,
    };
    // `sync_interval_minutes`: the watcher also syncs the home with sync_remote.
    let sync = (config.settings.sync_interval_minutes > 0 && config.settings.sync_remote.is_some())
        .then(|| {
            (
                config.clone(),
                Duration::from_secs(config.settings.sync_interval_minutes.saturating_mul(60)),
            )
        });
    let runtime = Runtime::open_for_command(config)?;
    let reminders = runtime.reminders()?;
    let announcer = Announcer {
        notify,
        bell: std::io::stdout().is_terminal(),
    };
    if !watch_on {
        return announcer.announce_due(&runtime, &reminders, runtime.time.now());
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RemindError::AsyncRuntime)?
        .block_on(watch(&runtime, &reminders, &announcer, sync.as_ref()))
}

struct Announcer {
    notify: Option<Vec<String>>,
    bell: bool,
}

impl Announcer {
    /// Claims and announces what is due at `now`.
    fn announce_due(
        &self,
        runtime: &Runtime,
        reminders: &Reminders,
        now: jiff::Timestamp,
    ) -> Result<(), RemindError> {
        // With standard output closed (`elroy remind >&-`) every line would vanish unseen:
        // nothing is claimed, and the reminders stay due for a run that can show them.
        output::check_stdout_open().map_err(RemindError::Output)?;
        let due = reminders.claim_due(now, Channel::CommandLine)?;
        for (shown, announcement) in due.iter().enumerate() {
            // An announcement nobody could read (standard output closed or failing) is not
            // announced: its claim and those of the rest are taken back for the next run.
            let result = self.announce(announcement);
            if result.is_err() || output::stdout_closed() {
                for unread in &due[shown..] {
                    if let Err(e) = reminders.release(unread, Channel::CommandLine) {
                        output::eprintln(&format!("warning: {e}"));
                    }
                }
                return result;
            }
            // Shown: a repeating item moves to its next occurrence (one commit, undoable).
            if let Err(e) = runtime.record_occurrence_announced(reminders, announcement, now) {
                output::eprintln(&format!("warning: {e}"));
            }
        }
        Ok(())
    }

    fn announce(&self, announcement: &Announcement) -> Result<(), RemindError> {
        let mut line = announcement.line.clone();
        if self.bell {
            line.push('\x07');
        }
        output::println(&line).map_err(RemindError::Output)?;
        if let Some(words) = &self.notify
            && let Err(e) = run_notify(words, &announcement.title, &announcement.body)
        {
            output::eprintln(&format!("warning: notify_command: {e}"));
        }
        Ok(())
    }
}

/// Runs `words` + `title` + `body` directly (no shell), standard output discarded, in a process
/// group of its own, and waits for it at most [`NOTIFY_TIMEOUT`]; then the whole group is killed
/// (a script's children too, so a hanging `sleep` or notifier never outlives the run).
fn run_notify(words: &[String], title: &str, body: &str) -> Result<(), NotifyError> {
    use std::os::unix::process::CommandExt;
    let (program, leading) = words.split_first().ok_or(NotifyError::Empty)?;
    let mut command = Command::new(program);
    command
        .args(leading)
        .arg(title)
        .arg(body)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0);
    // A script written a moment ago may still be open for writing somewhere: retried.
    let mut child = elroy_plugins::process::retry_busy(|| command.spawn()).map_err(|source| {
        NotifyError::Spawn {
            program: program.clone(),
            source,
        }
    })?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(NotifyError::Failed {
                    program: program.clone(),
                    status,
                });
            }
            Ok(None) if started.elapsed() < NOTIFY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                elroy_plugins::process::kill_group(Some(child.id()));
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotifyError::Timeout {
                    program: program.clone(),
                });
            }
            Err(source) => {
                return Err(NotifyError::Wait {
                    program: program.clone(),
                    source,
                });
            }
        }
    }
}

/// Why `notify_command` did not deliver an announcement (a warning; the line was printed).
#[derive(Debug, thiserror::Error)]
enum NotifyError {
    /// The command has no words.
    #[error("empty command")]
    Empty,
    /// The program could not be started.
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The program ended unsuccessfully.
    #[error("{program} ended with {status}")]
    Failed {
        program: String,
        status: std::process::ExitStatus,
    },
    /// The program ran longer than [`NOTIFY_TIMEOUT`] and was stopped.
    #[error("{program} did not finish within {} s and was stopped", NOTIFY_TIMEOUT.as_secs())]
    Timeout { program: String },
    /// Waiting for the program failed.
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// How long to sleep when it is `now` and the next trigger is `next`: until the trigger, at
/// most [`POLL`].
fn sleep_for(now: jiff::Timestamp, next: Option<jiff::Timestamp>) -> Duration {
    let Some(next) = next else { return POLL };
    let until = next.duration_since(now);
    let millis = until.as_millis().max(0);
    // A few milliseconds late rather than early, so the trigger has passed on waking.
    Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX).saturating_add(5)).min(POLL)
}

async fn watch(
    runtime: &Runtime,
    reminders: &Reminders,
    announcer: &Announcer,
    sync: Option<&(Config, Duration)>,
) -> Result<(), RemindError> {
    use tokio::signal::unix::{SignalKind, signal};
    // Watching ends itself on these; its exit stops the MCP servers.
    {
        use elroy_mcp_client::signals::{Ending, handled_by_front_end};
        handled_by_front_end(&[Ending::Terminate, Ending::Interrupt]);
    }
    let mut last_sync: Option<std::time::Instant> = None;
    let mut terminate =
        signal(SignalKind::terminate()).map_err(|e| RemindError::Signal("SIGTERM", e))?;
    let mut interrupt =
        signal(SignalKind::interrupt()).map_err(|e| RemindError::Signal("SIGINT", e))?;
    loop {
        if let Some((config, every)) = sync
            && last_sync.is_none_or(|at| at.elapsed() >= *every)
        {
            // Before the look, so pulled due items are announced at once; one status line.
            let result = crate::sync::sync_home(config, None, crate::sync::SHORT_SYNC_TIMEOUT);
            output::eprintln(&crate::sync::status_line(&result));
            last_sync = Some(std::time::Instant::now());
        }
        // Wall clock (or ELROY_NOW): a trigger passed during sleep is due on the first look.
        let now = runtime.time.now();
        let next = match announcer
            .announce_due(runtime, reminders, now)
            .and_then(|()| Ok(reminders.next_trigger(now)?))
        {
            Ok(next) => next,
            Err(e) => {
                // A locked database or an unreadable directory: say so, look again later.
                output::eprintln(&format!("warning: {e}"));
                None
            }
        };
        if output::stdout_closed() {
            return Ok(());
        }
        tokio::select! {
            () = tokio::time::sleep(sleep_for(now, next)) => {}
            _ = terminate.recv() => return Ok(()),
            _ = interrupt.recv() => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sleeps_until_the_next_trigger_at_most_poll() {
        let now: jiff::Timestamp = "2026-12-01T09:00:00Z".parse().unwrap();
        let at = |ms: i64| jiff::Timestamp::from_millisecond(now.as_millisecond() + ms).unwrap();
        assert_eq!(sleep_for(now, None), POLL);
        assert_eq!(sleep_for(now, Some(at(700))), Duration::from_millis(705));
        assert_eq!(sleep_for(now, Some(at(60_000))), POLL);
        assert_eq!(sleep_for(now, Some(at(-5))), Duration::from_millis(5));
    }
}
