//! The stat signature of a file version, shared by the validated indexes of the agenda and memory
//! stores: a file whose signature is unchanged is not read again.

use std::path::Path;

/// Size, modification time (nanoseconds), inode and status-change time (nanoseconds) of a file.
///
/// A `git checkout` or an editor that renames a new file over the old one changes the inode; an
/// edit in place changes the mtime and the ctime, and the ctime also when the mtime is set back
/// (`touch -d`, `cp -p`) or the size stays the same. Off Unix, `ino` is 0 and `ctime_ns` is the
/// mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: i64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Inode number.
    pub ino: i64,
    /// Status-change time, nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
}

/// A stamp younger than this (by the wall clock) is "racy", as in git: the file may change again
/// within the file system's timestamp granularity (FAT's two seconds are the coarsest in use)
/// without a visible change, so an index must not trust it and reads the file again next time.
pub const RACY_NS: i64 = 2_000_000_000;

impl FileStamp {
    /// The signature of `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileStamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
            FileStamp {
                size: i64::try_from(meta.size()).unwrap_or(i64::MAX),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ino: meta.ino() as i64,
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
            FileStamp {
                size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
                mtime_ns,
                ino: 0,
                ctime_ns: mtime_ns,
            }
        }
    }

    /// The signature of the file (or directory) at `path`, following symlinks; `None` when it
    /// cannot be stat'ed.
    pub fn read(path: &Path) -> Option<FileStamp> {
        std::fs::metadata(path)
            .ok()
            .map(|meta| FileStamp::of(&meta))
    }

    /// Whether the file was modified within [`RACY_NS`] of `now_ns` (or claims a future time).
    pub fn is_racy(&self, now_ns: i64) -> bool {
        now_ns.saturating_sub(self.mtime_ns) < RACY_NS
    }
}

/// The wall clock in nanoseconds since the epoch (file times are wall-clock times, whatever
/// `ELROY_NOW` says).
pub fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
