//! Fetching from and pushing to the sync remote.
//!
//! Local paths and `file://` URLs go through git2 (libgit2's local transport, no program needed).
//! Network remotes (`ssh://`, `https://`, `git://`, scp-like `user@host:path`) run the user's own
//! `git` for the fetch and the push only, as cargo's `net.git-fetch-with-cli` does: git2 is built
//! without its `https`/`ssh` features (they build OpenSSL and libssh2), and the user's `git`
//! already knows their keys, agents, credential helpers and proxies. It never prompts
//! (`GIT_TERMINAL_PROMPT=0`, ssh in batch mode): a remote that needs credentials it cannot get is
//! an error, not a hang.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git2::{Direction, FetchOptions, Oid, PushOptions, RemoteCallbacks, Repository};

use crate::SyncError;

/// The ref the remote's branch is fetched into: `refs/remotes/sync/<branch>`.
pub(crate) fn tracking_ref(branch: &str) -> String {
    format!("refs/remotes/sync/{branch}")
}

/// Whether `remote` is reached through git2's local transport: a path or a `file://` URL.
pub fn is_local(remote: &str) -> bool {
    if remote.starts_with("file://") {
        return true;
    }
    if remote.contains("://") {
        return false;
    }
    // scp-like `host:path` / `user@host:path` (a `:` before any `/`), but not `C:\…`.
    match remote.find(':') {
        Some(colon) => {
            let before = &remote[..colon];
            before.contains('/') || (before.len() == 1 && cfg!(windows))
        }
        None => true,
    }
}

/// Fetches `branch` of `remote` into [`tracking_ref`]. Returns the fetched commit, or `None` when
/// the remote has no such branch yet (a new, empty repository).
///
/// # Errors
/// [`SyncError::Remote`] when the remote cannot be reached, is not a repository, or refuses.
pub(crate) fn fetch(
    repo: &Repository,
    root: &Path,
    remote: &str,
    branch: &str,
    timeout: Duration,
) -> Result<Option<Oid>, SyncError> {
    let tracking = tracking_ref(branch);
    if is_local(remote) {
        let unreachable = |e: git2::Error| SyncError::Remote {
            remote: remote.to_owned(),
            message: e.message().to_owned(),
        };
        let path = remote.strip_prefix("file://").unwrap_or(remote);
        if !Path::new(path).exists() {
            return Err(SyncError::Remote {
                remote: remote.to_owned(),
                message: "no such directory".into(),
            });
        }
        let mut handle = repo.remote_anonymous(remote).map_err(unreachable)?;
        handle.connect(Direction::Fetch).map_err(unreachable)?;
        let wanted = format!("refs/heads/{branch}");
        let has_branch = handle
            .list()
            .map_err(unreachable)?
            .iter()
            .any(|head| head.name() == wanted);
        handle.disconnect().map_err(unreachable)?;
        if !has_branch {
            return Ok(None);
        }
        let mut options = FetchOptions::new();
        options.download_tags(git2::AutotagOption::None);
        handle
            .fetch(
                &[format!("+{wanted}:{tracking}")],
                Some(&mut options),
                Some("elroy sync: fetch"),
            )
            .map_err(unreachable)?;
    } else {
        let refspec = format!("+refs/heads/{branch}:{tracking}");
        let out = run_git(
            root,
            &["fetch", "--no-tags", "--", remote, &refspec],
            timeout,
        )?;
        if !out.ok {
            if out.stderr.contains("couldn't find remote ref") {
                return Ok(None);
            }
            return Err(SyncError::Remote {
                remote: remote.to_owned(),
                message: out.message(),
            });
        }
    }
    match repo.refname_to_id(&tracking) {
        Ok(id) => Ok(Some(id)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What a push came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The remote's branch now holds the commit.
    Done,
    /// The remote's branch moved since the fetch (another machine pushed): fetch and merge again.
    NotFastForward,
}

/// Whether a `git` program can be run (looked up once per process).
fn git_installed() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        Command::new("git")
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Whether a push to `remote` goes through the `git` program: network remotes, `file://` URLs
/// (as `git push` reaches them: through `git receive-pack`, which runs the remote's hooks), and
/// local paths whose repository has a receive hook (`hooks/pre-receive`, `hooks/update`), which
/// libgit2's local transport would skip. Other local paths go through libgit2, and so does every
/// local remote on a machine without a `git` program.
pub fn pushes_with_git(remote: &str) -> bool {
    if !is_local(remote) {
        return true;
    }
    if !git_installed() {
        return false;
    }
    if remote.starts_with("file://") {
        return true;
    }
    let path = Path::new(remote);
    let git_dir = if path.join(".git").is_dir() {
        path.join(".git")
    } else {
        path.to_path_buf()
    };
    ["pre-receive", "update"]
        .iter()
        .any(|hook| git_dir.join("hooks").join(hook).is_file())
}

/// Pushes the local `branch` to the remote's `branch` (never forced) and confirms the remote took
/// it: [`Pushed::Done`] only when the remote's branch now holds `head` (the commit this machine's
/// branch is at).
///
/// # Errors
/// [`SyncError::Remote`] when the remote cannot be reached or refuses for another reason than
/// another machine's push (its own words: hook output, permissions), or does not hold `head`
/// after a push it did not refuse.
pub(crate) fn push(
    repo: &Repository,
    root: &Path,
    remote: &str,
    branch: &str,
    head: Oid,
    timeout: Duration,
) -> Result<Pushed, SyncError> {
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    let refused = |reason: &str| SyncError::Remote {
        remote: remote.to_owned(),
        message: format!(
            "the push was refused: {}; what this machine has stays here and goes out with the \
             next elroy sync",
            reason.trim_end_matches([':', ' ', ';'])
        ),
    };
    if pushes_with_git(remote) {
        let out = run_git(
            root,
            &["push", "--porcelain", "--", remote, &refspec],
            timeout,
        )?;
        return match porcelain_status(&out.stdout, &format!("refs/heads/{branch}")) {
            Some(PushLine::Updated) if out.ok => Ok(Pushed::Done),
            Some(PushLine::UpToDate) if out.ok => {
                if verify(repo, root, remote, branch, head, timeout)? {
                    Ok(Pushed::Done)
                } else {
                    Err(refused(&format!(
                        "the remote's {branch} is already where this machine's {branch} is, which \
                         is not the commit being synced"
                    )))
                }
            }
            Some(PushLine::Rejected(reason)) if is_not_fast_forward(&reason) => {
                Ok(Pushed::NotFastForward)
            }
            Some(PushLine::Rejected(reason)) => {
                Err(refused(&with_remote_lines(&reason, &out.stderr)))
            }
            _ if out.ok => Err(refused("git push said nothing about the branch")),
            _ => Err(SyncError::Remote {
                remote: remote.to_owned(),
                message: with_remote_lines(&out.message(), &out.stderr),
            }),
        };
    }
    let failed = |e: git2::Error| SyncError::Remote {
        remote: remote.to_owned(),
        message: e.message().to_owned(),
    };
    let mut handle = repo.remote_anonymous(remote).map_err(failed)?;
    let rejected = std::cell::RefCell::new(None::<String>);
    let mut callbacks = RemoteCallbacks::new();
    callbacks.push_update_reference(|_name, status| {
        if let Some(status) = status {
            *rejected.borrow_mut() = Some(status.to_owned());
        }
        Ok(())
    });
    let mut options = PushOptions::new();
    options.remote_callbacks(callbacks);
    match handle.push(&[refspec.as_str()], Some(&mut options)) {
        Ok(()) => {}
        Err(e) if is_not_fast_forward(e.message()) => return Ok(Pushed::NotFastForward),
        Err(e) => return Err(failed(e)),
    }
    drop(options);
    if let Some(status) = rejected.into_inner() {
        if is_not_fast_forward(&status) {
            return Ok(Pushed::NotFastForward);
        }
        return Err(refused(&status));
    }
    if verify(repo, root, remote, branch, head, timeout)? {
        Ok(Pushed::Done)
    } else {
        Err(refused(&format!(
            "the remote's {branch} does not hold this machine's commit after the push"
        )))
    }
}

/// Whether the remote's `branch` is at `head` now (asked of the remote itself).
fn verify(
    repo: &Repository,
    root: &Path,
    remote: &str,
    branch: &str,
    head: Oid,
    timeout: Duration,
) -> Result<bool, SyncError> {
    let wanted = format!("refs/heads/{branch}");
    if is_local(remote) {
        let unreachable = |e: git2::Error| SyncError::Remote {
            remote: remote.to_owned(),
            message: e.message().to_owned(),
        };
        let mut handle = repo.remote_anonymous(remote).map_err(unreachable)?;
        handle.connect(Direction::Fetch).map_err(unreachable)?;
        let at = handle
            .list()
            .map_err(unreachable)?
            .iter()
            .find(|h| h.name() == wanted)
            .map(|h| h.oid());
        handle.disconnect().map_err(unreachable)?;
        return Ok(at == Some(head));
    }
    let out = run_git(root, &["ls-remote", "--", remote, &wanted], timeout)?;
    Ok(out.ok
        && out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .any(|(id, name)| name == wanted && id == head.to_string()))
}

/// What `git push --porcelain` said about one ref.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PushLine {
    /// Updated, created, or force-updated (`' '`, `'*'`, `'+'`, `'-'`).
    Updated,
    /// Already there (`'='`).
    UpToDate,
    /// Refused (`'!'`), with git's summary and reason, e.g. `[remote rejected] (pre-receive
    /// hook declined)`.
    Rejected(String),
}

/// The status `git push --porcelain` printed for the remote ref `dst` (lines
/// `FLAG\tSRC:DST\tSUMMARY (REASON)`).
fn porcelain_status(stdout: &str, dst: &str) -> Option<PushLine> {
    stdout.lines().find_map(|line| {
        let mut fields = line.splitn(3, '\t');
        let flag = fields.next()?;
        let refs = fields.next()?;
        let summary = fields.next().unwrap_or_default();
        if refs.rsplit(':').next()? != dst {
            return None;
        }
        Some(match flag {
            "=" => PushLine::UpToDate,
            "!" => PushLine::Rejected(summary.trim().to_owned()),
            _ => PushLine::Updated,
        })
    })
}

/// `reason` followed by the remote's own lines of `stderr` (`remote: …`: a hook's output), so a
/// refusal says what the remote said.
fn with_remote_lines(reason: &str, stderr: &str) -> String {
    let remote: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if remote.is_empty() {
        return reason.to_owned();
    }
    format!("{reason}; the remote said: {}", remote.join(" / "))
}

fn is_not_fast_forward(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    // A hook's or the server's refusal (`[remote rejected]`) is not another machine's push.
    !m.contains("remote rejected")
        && (m.contains("non-fast-forward")
            || m.contains("fastforwardable")
            || m.contains("fetch first")
            // libgit2's local transport, when the remote's branch moved since the fetch.
            || m.contains("not present locally"))
}

struct GitOutput {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl GitOutput {
    /// The last few lines git wrote to stderr (its reason), else a generic text.
    fn message(&self) -> String {
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            return "git failed without saying why".into();
        }
        lines[lines.len().saturating_sub(3)..].join("; ")
    }
}

/// Runs `git -C root ARGS` without prompting, killed after `timeout`. Callers put `--` before the
/// remote, so a remote that starts with `-` (`--upload-pack=CMD`) is never read as an option.
fn run_git(root: &Path, args: &[&str], timeout: Duration) -> Result<GitOutput, SyncError> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if std::env::var_os("GIT_SSH_COMMAND").is_none() && std::env::var_os("GIT_SSH").is_none() {
        command.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
    }
    let mut child = command.spawn().map_err(|e| SyncError::Remote {
        remote: args
            .get(args.len().saturating_sub(2))
            .copied()
            .unwrap_or("")
            .to_owned(),
        message: format!("cannot run git for this remote ({e}); install git, or use a local path"),
    })?;
    // Read both pipes on threads so a chatty git never blocks on a full pipe.
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(pipe) = stderr.as_mut() {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    match status {
        Some(status) => Ok(GitOutput {
            ok: status.success(),
            stdout,
            stderr,
        }),
        None => Ok(GitOutput {
            ok: false,
            stdout,
            stderr: format!("no answer within {} s", timeout.as_secs()),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;
    use std::time::Duration;

    use git2::{Repository, Signature};

    use super::{PushLine, Pushed, is_local, porcelain_status, push, pushes_with_git};

    /// A repository at `dir` with one commit on `main` whose message is `message`.
    fn repo_with_commit(dir: &Path, message: &str) -> Repository {
        let repo = Repository::init(dir).unwrap();
        let tree = repo.treebuilder(None).unwrap().write().unwrap();
        let tree = repo.find_tree(tree).unwrap();
        let sig = Signature::now("elroy", "elroy@test").unwrap();
        repo.commit(Some("refs/heads/main"), &sig, &sig, message, &tree, &[])
            .unwrap();
        drop(tree);
        repo
    }

    #[test]
    fn a_remote_that_looks_like_an_option_is_not_run_as_one() {
        // `git fetch --upload-pack=CMD` runs CMD: the remote must reach git as a repository.
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = repo_with_commit(&home, "home");
        let remote = "--upload-pack=touch pwned:x";
        assert!(!is_local(remote));
        let timeout = Duration::from_secs(10);
        assert!(super::fetch(&repo, &home, remote, "main", timeout).is_err());
        let head = repo.refname_to_id("refs/heads/main").unwrap();
        assert!(push(&repo, &home, remote, "main", head, timeout).is_err());
        assert!(
            !home.join("pwned:x").exists(),
            "git ran the remote as a command"
        );
    }

    #[test]
    fn a_local_push_after_another_machine_pushed_is_not_fast_forward() {
        // Another machine pushed between this machine's fetch and push: the sync must fetch
        // and merge again, not stop with "the remote refused".
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("remote.git");
        Repository::init_bare(&remote).unwrap();
        let url = remote.to_string_lossy().into_owned();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        let first_repo = repo_with_commit(&first, "first machine");
        let second_repo = repo_with_commit(&second, "second machine");
        let timeout = Duration::from_secs(10);
        let first_head = first_repo.refname_to_id("refs/heads/main").unwrap();
        let second_head = second_repo.refname_to_id("refs/heads/main").unwrap();
        assert_eq!(
            push(&first_repo, &first, &url, "main", first_head, timeout).unwrap(),
            Pushed::Done
        );
        assert_eq!(
            push(&second_repo, &second, &url, "main", second_head, timeout).unwrap(),
            Pushed::NotFastForward
        );
        // The same through the `git` program (a `file://` URL), whose porcelain line says so.
        let file_url = format!("file://{url}");
        assert!(pushes_with_git(&file_url));
        assert_eq!(
            push(
                &second_repo,
                &second,
                &file_url,
                "main",
                second_head,
                timeout
            )
            .unwrap(),
            Pushed::NotFastForward
        );
    }

    #[test]
    fn porcelain_lines_tell_a_hook_refusal_from_another_machines_push() {
        let dst = "refs/heads/main";
        let line = |s: &str| porcelain_status(&format!("To /r.git\n{s}\nDone\n"), dst);
        assert_eq!(
            line("!\trefs/heads/main:refs/heads/main\t[rejected] (fetch first)"),
            Some(PushLine::Rejected("[rejected] (fetch first)".into()))
        );
        assert!(super::is_not_fast_forward("[rejected] (non-fast-forward)"));
        assert!(!super::is_not_fast_forward(
            "[remote rejected] (pre-receive hook declined)"
        ));
        assert_eq!(
            line("=\trefs/heads/main:refs/heads/main\t[up to date]"),
            Some(PushLine::UpToDate)
        );
        assert_eq!(
            line(" \trefs/heads/main:refs/heads/main\tabc..def"),
            Some(PushLine::Updated)
        );
        assert_eq!(
            line("*\trefs/heads/other:refs/heads/other\t[new branch]"),
            None
        );
    }

    #[test]
    fn local_or_network() {
        for local in [
            "/srv/elroy.git",
            "../elroy.git",
            "file:///srv/elroy.git",
            "a/b:c",
        ] {
            assert!(is_local(local), "{local}");
        }
        for network in [
            "ssh://me@host/srv/elroy.git",
            "https://example.com/me/elroy.git",
            "me@host:elroy.git",
            "host:elroy.git",
        ] {
            assert!(!is_local(network), "{network}");
        }
    }
}
