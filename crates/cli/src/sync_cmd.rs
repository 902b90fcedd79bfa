//! `elroy sync [--remote URL]`: one home on several machines, through
//! `elroy_runtime::sync`.

use std::process::ExitCode;

use elroy_config::Config;

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
/// reached or refuses (the home is then as before).
pub(crate) fn run(config: &Config, args: &SyncArgs) -> Result<ExitCode, String> {
    let remote = args.remote.as_deref().map(absolute);
    let report = elroy_runtime::sync::sync_home(
        config,
        remote.as_deref(),
        elroy_runtime::sync::SYNC_TIMEOUT,
    )
    .map_err(|e| e.to_string())?;
    if let Some(remote) = &remote
        && config.settings.sync_remote.is_none()
    {
        let file = config.writable_file();
        match elroy_config::set_key(&file, "sync_remote", &remote.as_str().into()) {
            Ok(()) => output::println(&format!(
                "Saved sync_remote: {remote} in {}",
                file.display()
            ))?,
            Err(e) => output::eprintln(&format!(
                "warning: synced, but could not save sync_remote in {}: {e}",
                file.display()
            )),
        }
    }
    if let (Some(remote), Some(saved)) = (&remote, &config.settings.sync_remote)
        && remote != saved
    {
        // A one-off remote: say so, so nobody believes the saved one changed.
        output::println(&format!(
            "Synced with {remote} this time; sync_remote stays {saved} (change it in elroy.conf.yaml)"
        ))?;
    }
    for line in elroy_runtime::sync::report_lines(&report) {
        output::println(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A local path given on the command line made absolute (from the working directory), so the
/// saved `sync_remote` works from anywhere; URLs and `file://` are kept as given.
fn absolute(remote: &str) -> String {
    if !elroy_sync::transport::is_local(remote) || remote.starts_with("file://") {
        return remote.to_owned();
    }
    std::path::absolute(remote)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| remote.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_relative_remote_is_saved_absolute() {
        let got = super::absolute("remote.git");
        assert!(std::path::Path::new(&got).is_absolute(), "{got}");
        assert!(got.ends_with("remote.git"));
        assert_eq!(super::absolute("me@host:elroy.git"), "me@host:elroy.git");
        assert_eq!(super::absolute("file:///srv/e.git"), "file:///srv/e.git");
    }
}
