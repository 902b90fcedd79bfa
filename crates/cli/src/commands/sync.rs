//! `elroy sync [--remote URL]`: one home on several machines, through
//! `elroy_runtime::sync`.

use std::process::ExitCode;

use elroy_config::{Config, RemoteSaved};

use crate::output;

/// `elroy sync …`
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  git init --bare /mnt/usb/elroy.git
  elroy sync --remote /mnt/usb/elroy.git     the first time (saved as sync_remote)
  elroy sync                                 afterwards, on each machine

Remotes: a path (through libgit2, no git program needed, unless the repository has a pre-receive or \
update hook), or file://, ssh://, https://, user@host:path (through your own git program, which runs the \
remote's hooks and must be able to log in without asking).

Nothing is ever lost: a file changed on both machines is merged by its structure, and what cannot be \
merged is kept in a FILE.sync-conflict-MACHINE file next to it (elroy doctor lists them; merge it by \
hand and delete it). Renamed items stay one item; two items of the same name made on two machines both stay, \
one renamed NAME (from MACHINE).

Your own git in the home: while a merge, rebase, cherry-pick or revert is unfinished, HEAD is detached, or a \
store file holds conflict markers, elroy sync refuses and names the command that ends it (git merge --abort, \
git rebase --abort, git switch main); while a git command holds a lock, it waits a few seconds, then names \
the lock. A push is reported only once the remote has it; a refusal shows the remote's reason.

Options: sync_on_start, sync_on_exit, sync_interval_minutes (elroy config).")]
pub struct SyncArgs {
    /// The git remote to sync with: a path to a bare repository, or an ssh/https git URL; saved as
    /// sync_remote in elroy.conf.yaml when none is configured yet, otherwise used for this sync only
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
}

/// `elroy sync`: prints what was pulled, pushed and merged; exit 1 when the remote cannot be
/// reached or refuses (the home is then as before). The first `--remote` is saved as
/// `sync_remote` (`Config::keep_sync_remote`).
pub(crate) fn run(config: &Config, args: &SyncArgs) -> Result<ExitCode, String> {
    let remote = args
        .remote
        .as_deref()
        .map(elroy_runtime::sync::absolute_remote);
    let report = elroy_runtime::sync::sync_home(
        config,
        remote.as_deref(),
        elroy_runtime::sync::SYNC_TIMEOUT,
    )
    .map_err(|e| e.to_string())?;
    match remote.as_deref().map(|r| (r, config.keep_sync_remote(r))) {
        Some((remote, RemoteSaved::Saved(file))) => output::println(&format!(
            "Saved sync_remote: {remote} in {}",
            file.display()
        ))?,
        Some((_, RemoteSaved::NotSaved { file, error })) => output::eprintln(&format!(
            "warning: synced, but could not save sync_remote in {}: {error}",
            file.display()
        )),
        // A one-off remote: say so, so nobody believes the saved one changed.
        Some((remote, RemoteSaved::OneOff { saved })) => output::println(&format!(
            "Synced with {remote} this time; sync_remote stays {saved} (change it in elroy.conf.yaml)"
        ))?,
        Some((_, RemoteSaved::Same)) | None => {}
    }
    for line in elroy_runtime::sync::report_lines(&report) {
        output::println(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}
