//! The machine a change was made on (`elroy sync`): every commit elroy makes carries it
//! in its author and committer e-mail, `elroy@MACHINE`, so that after a sync `elroy history` can
//! name the machine a pulled change came from and `elroy undo` can pass over other machines'
//! changes. Commits made before machines were recorded carry `elroy@localhost` and count as this
//! machine's. Uses no other module of the crate.

use std::sync::RwLock;

use git2::{Commit, Signature, Time};
use jiff::Timestamp;

use crate::error::HistoryError;

/// The committer and author name of every commit elroy makes.
pub const COMMITTER_NAME: &str = "elroy";
/// The committer and author e-mail of commits made before machines were recorded (and the
/// default of none); commits now carry `elroy@MACHINE` ([`machine_signature`]).
pub const COMMITTER_EMAIL: &str = "elroy@localhost";

/// The summary prefix of the commits `elroy sync` makes (`sync: merge from HOST`, `sync: renumber`,
/// `sync: names`): never undone, never this machine's own change.
pub const SYNC_PREFIX: &str = "sync: ";

static MACHINE: RwLock<Option<String>> = RwLock::new(None);

/// Sets this process's machine name (the `machine_name` configuration key); `None` goes back to
/// the host name. Characters other than ASCII letters, digits, `-` and `.` become `-`, so the name
/// fits an e-mail address and a file name.
pub fn set_machine_name(name: Option<&str>) {
    let clean = name.map(clean_machine_name).filter(|n| !n.is_empty());
    if let Ok(mut slot) = MACHINE.write() {
        *slot = clean;
    }
}

/// This machine's name: the one set with [`set_machine_name`], else the host name
/// (`/proc/sys/kernel/hostname`, `/etc/hostname`, `$HOSTNAME`, the `hostname` program), else
/// `localhost`.
pub fn machine_name() -> String {
    if let Ok(slot) = MACHINE.read()
        && let Some(name) = slot.as_ref()
    {
        return name.clone();
    }
    host_name()
}

fn host_name() -> String {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(read_host_name).clone()
}

fn read_host_name() -> String {
    let from_file = |path: &str| std::fs::read_to_string(path).ok();
    let found = from_file("/proc/sys/kernel/hostname")
        .or_else(|| from_file("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| {
            std::process::Command::new("hostname")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        })
        .map(|n| clean_machine_name(n.trim()))
        .filter(|n| !n.is_empty());
    found.unwrap_or_else(|| "localhost".to_owned())
}

fn clean_machine_name(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The author and committer of a commit made now on this machine: `elroy <elroy@MACHINE>`.
///
/// # Errors
/// [`HistoryError::Git`] when git refuses the signature.
pub fn machine_signature(now: Timestamp) -> Result<Signature<'static>, HistoryError> {
    Ok(Signature::new(
        COMMITTER_NAME,
        &format!("elroy@{}", machine_name()),
        &Time::new(now.as_second(), 0),
    )?)
}

/// The machine `commit` was made on, from its author e-mail (`elroy@MACHINE`); `None` for commits
/// of no recorded machine (`elroy@localhost`, made before machines were recorded, or by a person's
/// own `git`).
pub fn commit_machine(commit: &Commit<'_>) -> Option<String> {
    let author = commit.author();
    let email = author.email().ok()?;
    let machine = email.strip_prefix("elroy@")?;
    (email != COMMITTER_EMAIL && !machine.is_empty()).then(|| machine.to_owned())
}

/// Whether `commit` was made by another machine (its recorded machine is not [`machine_name`]).
pub fn is_other_machine(commit: &Commit<'_>) -> bool {
    commit_machine(commit).is_some_and(|m| m != machine_name())
}

#[cfg(test)]
mod tests {
    use super::clean_machine_name;

    #[test]
    fn machine_names_fit_an_address_and_a_file_name() {
        assert_eq!(clean_machine_name(" my laptop "), "my-laptop");
        assert_eq!(clean_machine_name("desk.local"), "desk.local");
        assert_eq!(clean_machine_name("a/b@c"), "a-b-c");
    }
}
