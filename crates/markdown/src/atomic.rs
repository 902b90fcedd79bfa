//! Atomic file writes, renames and removals (`docs/formats.md#atomic-writes`, decision D12).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::MarkdownError;

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn write_err(file: &str, e: &std::io::Error) -> MarkdownError {
    MarkdownError::write(file, e)
}

/// Eight hex digits that differ between calls and processes (not cryptographic).
fn random_hex() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or_default();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = nanos ^ count.wrapping_mul(0x9E37_79B9) ^ std::process::id().rotate_left(16);
    format!("{mixed:08x}")
}

fn sync_dir(dir: &Path) {
    // Directory fsync is best effort: not every platform or file system supports it.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The environment variable of the test-only pause point of [`write_atomic`].
///
/// **For tests only.** When it is set to a non-empty string, a [`write_atomic`] whose target path
/// contains that string stops between writing (and syncing) the temporary file and renaming it
/// over the target: it prints `ELROY_TEST_PAUSED_BEFORE_RENAME <target path>` on standard error
/// and sleeps until the process is killed. The reliability tests use it to kill elroy exactly
/// inside a write. Read once per process; unset, the check costs one atomic load per write.
pub const PAUSE_BEFORE_RENAME_ENV: &str = "ELROY_TEST_PAUSE_BEFORE_RENAME";

/// The line [`write_atomic`] prints on standard error when it pauses (see
/// [`PAUSE_BEFORE_RENAME_ENV`]), followed by a space and the target path.
pub const PAUSED_BEFORE_RENAME: &str = "ELROY_TEST_PAUSED_BEFORE_RENAME";

/// The test-only pause point (see [`PAUSE_BEFORE_RENAME_ENV`]).
fn pause_before_rename(path: &Path) {
    static NEEDLE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let needle = NEEDLE.get_or_init(|| {
        std::env::var(PAUSE_BEFORE_RENAME_ENV)
            .ok()
            .filter(|v| !v.is_empty())
    });
    let Some(needle) = needle else {
        return;
    };
    if !path.to_string_lossy().contains(needle.as_str()) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{PAUSED_BEFORE_RENAME} {}", path.display());
    let _ = err.flush();
    drop(err);
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// Writes `contents` to `path` atomically (`docs/formats.md#atomic-writes`): a temporary file
/// `.<name>.tmp-<pid>-<8 hex>` in the same directory, fsync, rename over the target, fsync the
/// directory. The target's permission bits are kept when it existed. The parent directory is
/// created when missing. On failure the temporary file is removed and the target is untouched. The
/// change is noted in the write journal ([`crate::WriteScope`]) when a scope is open for the file's
/// home. Tests can stop it just before the rename ([`PAUSE_BEFORE_RENAME_ENV`]); it is inert unless
/// that variable is set.
///
/// # Errors
/// [`MarkdownError::Write`]: `Unable to write {file}: {os error}`, `file` being the display path.
pub fn write_atomic(path: &Path, contents: &[u8], file: &str) -> Result<(), MarkdownError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| write_err(file, &e))?;
    crate::journal::before_change(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The temporary name adds up to 25 bytes; a 255-byte target name is cut (at a character
    // boundary) so that the temporary file can be created too.
    let name = crate::names::cut_bytes(&name, crate::MAX_FILE_NAME_BYTES - 25);
    let mut attempts = 0;
    let (tmp_path, mut tmp) = loop {
        let candidate = dir.join(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            random_hex()
        ));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => break (candidate, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 16 => {
                attempts += 1;
            }
            Err(e) => return Err(write_err(file, &e)),
        }
    };
    let result = (|| {
        tmp.write_all(contents)?;
        if let Ok(meta) = fs::metadata(path) {
            tmp.set_permissions(meta.permissions())?;
        }
        tmp.sync_all()?;
        drop(tmp);
        pause_before_rename(path);
        fs::rename(&tmp_path, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp_path);
        return Err(write_err(file, &e));
    }
    sync_dir(dir);
    Ok(())
}

/// Removes `path` and fsyncs its directory.
///
/// # Errors
/// [`MarkdownError::Write`] (`Unable to write {file}: {os error}`).
pub fn remove_file(path: &Path, file: &str) -> Result<(), MarkdownError> {
    crate::journal::before_change(path);
    fs::remove_file(path).map_err(|e| write_err(file, &e))?;
    if let Some(dir) = path.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// Moves `from` to `to` (`docs/formats.md#atomic-writes`): a rename within the file system; across
/// devices, an atomic write of the new path followed by removal of the old one. `to_file` is the
/// display path of `to`.
///
/// # Errors
/// [`MarkdownError::Write`] naming `to_file`.
pub fn rename_file(from: &Path, to: &Path, to_file: &str) -> Result<(), MarkdownError> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| write_err(to_file, &e))?;
    }
    crate::journal::before_change(from);
    crate::journal::before_change(to);
    match fs::rename(from, to) {
        Ok(()) => {
            if let Some(dir) = to.parent() {
                sync_dir(dir);
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let bytes = fs::read(from).map_err(|e| write_err(to_file, &e))?;
            write_atomic(to, &bytes, to_file)?;
            remove_file(from, to_file)
        }
        Err(e) => Err(write_err(to_file, &e)),
    }
}

/// Puts a second name `to` on the file `from` (`docs/formats.md#multi-step-writes`): a hard link,
/// or where the file system has none, an atomic copy. `from` stays as it is; `to` must not exist.
/// Used to keep the old version of a file in place until its replacement is written.
///
/// # Errors
/// [`MarkdownError::Write`] naming `to_file`.
pub fn link_file(from: &Path, to: &Path, to_file: &str) -> Result<(), MarkdownError> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| write_err(to_file, &e))?;
    }
    crate::journal::before_change(to);
    match fs::hard_link(from, to) {
        Ok(()) => {
            if let Some(dir) = to.parent() {
                sync_dir(dir);
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(write_err(to_file, &e)),
        Err(_) => {
            let bytes = fs::read(from).map_err(|e| write_err(to_file, &e))?;
            write_atomic(to, &bytes, to_file)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn writes_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/a.md");
        write_atomic(&p, b"one", "sub/a.md").unwrap();
        #[cfg(unix)]
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"two", "sub/a.md").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        #[cfg(unix)]
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let names: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["a.md"]);
        let q = dir.path().join("b.md");
        rename_file(&p, &q, "b.md").unwrap();
        assert!(!p.exists() && q.exists());
        remove_file(&q, "b.md").unwrap();
        assert!(!q.exists());
    }

    #[test]
    fn failure_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "x").unwrap();
        let err = write_atomic(&blocker.join("a.md"), b"x", "agenda/a.md").unwrap_err();
        assert!(err.to_string().starts_with("Unable to write agenda/a.md: "));
    }
}
