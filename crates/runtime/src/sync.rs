//! `elroy sync` for every front end: [`sync_home`] runs one sync of the configured
//! home with its remote; [`report_lines`] and [`status_line`] say what it did.

use std::time::Duration;

use elroy_config::{Config, DatabaseLocation};
use elroy_sync::{ChangeKind, SyncOptions, SyncReport};

/// The network timeout of `elroy sync` (fetch and push each).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(120);
/// The network timeout of the syncs at the start and end of an interactive session and in
/// `elroy remind --watch`: short, so a missing network costs seconds.
pub const SHORT_SYNC_TIMEOUT: Duration = Duration::from_secs(15);

/// How many names the report gives per store before `and N more` (a first sync of a big home).
pub const NAMES_PER_STORE: usize = 10;

/// Why [`sync_home`] did not sync.
#[derive(Debug, thiserror::Error)]
pub enum SyncHomeError {
    /// No `sync_remote` is configured and none was given.
    #[error(
        "no sync remote: run `elroy sync --remote URL` once (a path to a bare git repository, or an ssh/https git URL)"
    )]
    NoRemote,
    /// The versioned home is off, so there is no repository to sync.
    #[error("elroy sync needs the versioned home (versioned_home: true)")]
    NotVersioned,
    /// The sync failed.
    #[error("{0}")]
    Sync(#[from] elroy_sync::SyncError),
}

/// Syncs the home of `config` with `remote` (else `sync_remote`), with `timeout` for the network.
/// The machine's name is `machine_name` (else the host name).
///
/// # Errors
/// [`SyncHomeError`]: no remote, versioned home off, or the sync's error.
pub fn sync_home(
    config: &Config,
    remote: Option<&str>,
    timeout: Duration,
) -> Result<SyncReport, SyncHomeError> {
    if !config.settings.versioned_home {
        return Err(SyncHomeError::NotVersioned);
    }
    let remote = remote
        .map(str::to_owned)
        .or_else(|| config.settings.sync_remote.clone())
        .ok_or(SyncHomeError::NoRemote)?;
    elroy_history::set_machine_name(config.settings.machine_name.as_deref());
    let db = match &config.paths.database {
        DatabaseLocation::File(path) => Some(path.clone()),
        DatabaseLocation::Memory => None,
    };
    let now = config
        .now
        .unwrap_or_else(|| elroy_core::Clock::now(&elroy_core::SystemClock));
    let options = SyncOptions {
        remote,
        db,
        now,
        timeout,
    };
    Ok(elroy_sync::sync(&config.paths.elroy_home, &options)?)
}

/// The report of `elroy sync`: what was pulled and pushed by store with names (at most
/// [`NAMES_PER_STORE`] each, then `and N more`), conflicts and where each side's text went (every
/// one), renumbered memories. One line each, no trailing newline.
pub fn report_lines(report: &SyncReport) -> Vec<String> {
    let mut lines = Vec::new();
    let from = report.from.as_deref().unwrap_or("the remote");
    for (title, changes) in [
        (format!("Pulled from {from}"), &report.pulled),
        ("Pushed".to_owned(), &report.pushed),
    ] {
        if changes.is_empty() {
            continue;
        }
        lines.push(format!("{title}: {} file(s)", changes.len()));
        let mut stores: Vec<&str> = changes.iter().map(|c| c.store()).collect();
        stores.dedup();
        stores.sort_unstable();
        stores.dedup();
        for store in stores {
            let in_store: Vec<&elroy_sync::FileChange> =
                changes.iter().filter(|c| c.store() == store).collect();
            let mut items: Vec<String> = in_store
                .iter()
                .take(NAMES_PER_STORE)
                .map(|c| {
                    let verb = match c.kind {
                        ChangeKind::Added => "new",
                        ChangeKind::Modified => "changed",
                        ChangeKind::Deleted => "deleted",
                    };
                    format!("{} ({verb})", c.name)
                })
                .collect();
            if in_store.len() > NAMES_PER_STORE {
                items.push(format!("and {} more", in_store.len() - NAMES_PER_STORE));
            }
            lines.push(format!("  {store}: {}", items.join(", ")));
        }
    }
    let merged = elroy_sync::merge_lines(&report.merged);
    if !merged.is_empty() {
        lines.push(format!("Changed on both machines: {}", merged.len()));
        lines.extend(merged.into_iter().map(|l| format!("  {l}")));
    }
    if !report.renumbered.is_empty() {
        lines.push(format!(
            "Renumbered {} memory id(s) to keep ids unique:",
            report.renumbered.len()
        ));
        for r in &report.renumbered {
            lines.push(match r.old {
                Some(old) => format!("  {}: {old} -> {}", r.path, r.new),
                None => format!("  {}: new id {}", r.path, r.new),
            });
        }
    }
    if lines.is_empty() {
        lines.push("Already in sync: nothing to pull or push.".into());
    }
    // What the sync had to clean up first (a git lock a killed elroy left, ...).
    lines.extend(report.notes.iter().map(|n| format!("Note: {n}")));
    lines
}

/// One line for an interactive session or `elroy remind --watch`: `sync: pulled 3, pushed 1,
/// 1 conflict kept (elroy sync shows details)` or `sync failed: …`.
pub fn status_line(result: &Result<SyncReport, SyncHomeError>) -> String {
    match result {
        Ok(report) => {
            let mut parts = vec![
                format!("pulled {}", report.pulled.len()),
                format!("pushed {}", report.pushed.len()),
            ];
            let conflicts = report
                .merged
                .iter()
                .filter(|e| !matches!(e, elroy_sync::merge::ReportEntry::Merged { .. }))
                .count();
            if conflicts > 0 {
                parts.push(format!(
                    "{conflicts} conflict(s) resolved (see elroy history)"
                ));
            }
            format!("sync: {}", parts.join(", "))
        }
        Err(e) => format!("sync failed: {e}"),
    }
}

/// The sync at the start or the end of an interactive session (`sync_on_start`, `sync_on_exit`):
/// `None` when the option is off; else the one-line status of a sync with [`SHORT_SYNC_TIMEOUT`]
/// (a failure is a status line, never an error: the session goes on or ends as usual).
pub fn session_sync(config: &Config, at_start: bool) -> Option<String> {
    let enabled = if at_start {
        config.settings.sync_on_start
    } else {
        config.settings.sync_on_exit
    };
    if !enabled {
        return None;
    }
    Some(status_line(&sync_home(config, None, SHORT_SYNC_TIMEOUT)))
}

/// A remote given on the command line as a local path, made absolute (from the working
/// directory) so a saved `sync_remote` works from anywhere; URLs, `user@host:path` and `file://`
/// are kept as given.
pub fn absolute_remote(remote: &str) -> String {
    if !elroy_sync::transport::is_local(remote) || remote.starts_with("file://") {
        return remote.to_owned();
    }
    std::path::absolute(remote)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| remote.to_owned())
}

#[cfg(test)]
mod tests {
    use super::absolute_remote;
    use elroy_sync::{ChangeKind, FileChange, SyncReport};

    #[test]
    fn a_relative_remote_is_saved_absolute() {
        let got = absolute_remote("remote.git");
        assert!(std::path::Path::new(&got).is_absolute(), "{got}");
        assert!(got.ends_with("remote.git"));
        assert_eq!(absolute_remote("me@host:elroy.git"), "me@host:elroy.git");
        assert_eq!(absolute_remote("file:///srv/e.git"), "file:///srv/e.git");
    }

    #[test]
    fn a_big_pull_names_the_first_items_and_counts_the_rest() {
        let pulled = (0..25)
            .map(|n| FileChange {
                path: format!("agenda/Item_{n:02}.md"),
                kind: ChangeKind::Added,
                name: format!("Item {n:02}"),
            })
            .chain(std::iter::once(FileChange {
                path: "memories/Dog.md".into(),
                kind: ChangeKind::Modified,
                name: "Dog".into(),
            }))
            .collect();
        let report = SyncReport {
            pulled,
            from: Some("laptop".into()),
            ..SyncReport::default()
        };
        let lines = super::report_lines(&report);
        assert_eq!(lines[0], "Pulled from laptop: 26 file(s)");
        assert!(lines[1].starts_with("  agenda: Item 00 (new), Item 01 (new), "));
        assert!(
            lines[1].ends_with("Item 09 (new), and 15 more"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "  memories: Dog (changed)");
        assert_eq!(lines.len(), 3);
    }
}
