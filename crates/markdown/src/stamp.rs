//! The stat signature of a file or directory version, the one shape the directory indexes of the
//! agenda, memory and versioned-home stores compare (`crate::dir_index`): a file whose signature
//! is unchanged is not read again, a directory whose signature is unchanged is not listed again.

use std::path::Path;

/// Size, modification time (nanoseconds), inode and status-change time (nanoseconds) of a file.
///
/// A `git checkout` or an editor that renames a new file over the old one changes the inode; an
/// edit in place changes the mtime and the ctime, and the ctime also when the mtime is set back
/// (`touch -d`, `cp -p`) or the size stays the same. Off Unix, `ino` is 0 and `ctime_ns` is the
/// mtime. A directory's signature ([`FileStamp::of_dir`]) has `size` 0: its mtime, ctime and
/// inode change when an entry is added, removed or renamed, and stores that keep only those three
/// read back an equal stamp.
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

    /// The signature of the regular file at `path`, the link itself not followed: `None` when
    /// there is no such file, or it is a directory, a symlink (see `crate::dir_index` for why a
    /// link is never a store file) or anything else.
    pub fn of_file(path: &Path) -> Option<FileStamp> {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|meta| FileStamp::of(&meta))
    }

    /// The signature of the directory at `path` (a symlink to a directory followed: a store
    /// directory may live elsewhere), `size` 0; `None` when there is no directory there.
    pub fn of_dir(path: &Path) -> Option<FileStamp> {
        std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .map(|meta| FileStamp::sizeless(&meta))
    }

    /// The signature of `meta` with `size` 0: a directory's (its mtime, ctime and inode say
    /// whether an entry was added, removed or renamed), or a file's where an index keeps only
    /// those three (the versioned home's `.git/index`).
    pub fn sizeless(meta: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            size: 0,
            ..FileStamp::of(meta)
        }
    }

    /// The stamp to keep as trusted at the wall-clock time `now_ns`: `None` when it is racy
    /// ([`FileStamp::is_racy`]), so the next check reads (or lists) again.
    pub fn trusted(self, now_ns: i64) -> Option<FileStamp> {
        (!self.is_racy(now_ns)).then_some(self)
    }

    /// The stamp as one line of text, `{size} {mtime_ns} {ino} {ctime_ns}` (decimal), for an
    /// index that keeps it in a text value (the agenda's `meta` key `agenda_dir:{user}`);
    /// [`FileStamp::parse_token`] reads it back.
    pub fn token(&self) -> String {
        format!(
            "{} {} {} {}",
            self.size, self.mtime_ns, self.ino, self.ctime_ns
        )
    }

    /// The stamp of a [`FileStamp::token`]; `None` for any other text (an older form included:
    /// the index then lists again and stores the new form).
    pub fn parse_token(text: &str) -> Option<FileStamp> {
        let mut fields = text.split(' ').map(|f| f.parse::<i64>().ok());
        let stamp = FileStamp {
            size: fields.next()??,
            mtime_ns: fields.next()??,
            ino: fields.next()??,
            ctime_ns: fields.next()??,
        };
        fields.next().is_none().then_some(stamp)
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
