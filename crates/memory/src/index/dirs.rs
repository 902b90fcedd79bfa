//! The signatures of `memories/` and `archive/` (table `memory_dirs`), kept at the listing that
//! last covered each, and the free file names a write takes.

use std::path::PathBuf;

use elroy_markdown::FileStamp;
use rusqlite::{Connection, OptionalExtension, params};

use super::name_in_index;
use crate::{MemoryError, MemoryStore};

/// The signature of a directory that does not exist (kept as such: a missing `archive/` is not
/// listed again until it appears). Its fields are stored as -1 in `memory_dirs`.
pub(super) const MISSING_DIR: FileStamp = FileStamp {
    size: 0,
    mtime_ns: -1,
    ino: -1,
    ctime_ns: -1,
};

/// The signature of the directory at `path` ([`FileStamp::of_dir`]), [`MISSING_DIR`] when
/// there is none.
fn dir_signature(path: &std::path::Path) -> FileStamp {
    FileStamp::of_dir(path).unwrap_or(MISSING_DIR)
}

/// The two directories of the store: `memories/` (file names without a prefix) and its
/// `archive/` (file names `archive/…`).
pub(crate) const DIRS: [&str; 2] = ["", "archive/"];

impl MemoryStore {
    pub(super) fn dir_path(&self, prefix: &str) -> PathBuf {
        if prefix.is_empty() {
            self.opts.memory_dir.clone()
        } else {
            self.archive_dir()
        }
    }

    /// The current signatures of `memories/` and `archive/`.
    pub(crate) fn dir_sigs(&self) -> [FileStamp; 2] {
        DIRS.map(|prefix| dir_signature(&self.dir_path(prefix)))
    }

    /// The signatures recorded by the last listing of each directory (`None`: never listed, or
    /// listed while racy, or listed at another path).
    pub(crate) fn stored_dir_sigs(
        &self,
        c: &Connection,
    ) -> rusqlite::Result<[Option<FileStamp>; 2]> {
        let mut out = [None, None];
        for (i, prefix) in DIRS.iter().enumerate() {
            let path = self.dir_path(prefix).to_string_lossy().into_owned();
            out[i] = c
                .prepare_cached(
                    "SELECT mtime_ns, ctime_ns, ino FROM memory_dirs
                     WHERE user_id = ?1 AND dir = ?2 AND path = ?3",
                )?
                .query_row(params![self.opts.user_id, prefix, path], |r| {
                    Ok(FileStamp {
                        size: 0,
                        mtime_ns: r.get(0)?,
                        ctime_ns: r.get(1)?,
                        ino: r.get(2)?,
                    })
                })
                .optional()?;
        }
        Ok(out)
    }

    /// Records (or, with `None`, forgets) the signature of directory `prefix`.
    pub(super) fn store_dir_sig(
        &self,
        c: &Connection,
        prefix: &str,
        sig: Option<FileStamp>,
    ) -> rusqlite::Result<()> {
        match sig {
            Some(FileStamp {
                mtime_ns: mtime,
                ctime_ns: ctime,
                ino,
                ..
            }) => {
                let path = self.dir_path(prefix).to_string_lossy().into_owned();
                c.prepare_cached(
                    "INSERT INTO memory_dirs (user_id, dir, path, mtime_ns, ctime_ns, ino)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(user_id, dir) DO UPDATE SET path = excluded.path,
                       mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, ino = excluded.ino",
                )?
                .execute(params![self.opts.user_id, prefix, path, mtime, ctime, ino])?;
            }
            None => {
                c.prepare_cached("DELETE FROM memory_dirs WHERE user_id = ?1 AND dir = ?2")?
                    .execute(params![self.opts.user_id, prefix])?;
            }
        }
        Ok(())
    }

    /// After Elroy's own write under the home lock (inside the transaction `c`): a directory
    /// whose signature was trusted just before the write (`before` equals the stored one) keeps
    /// being trusted with its new signature, so the next command lists nothing. A change another
    /// program makes in the same instant is then seen at the next listing or by a full check
    /// (ARCHITECTURE.md, "memory index").
    pub(crate) fn carry_dir_sigs(
        &self,
        c: &Connection,
        before: [FileStamp; 2],
    ) -> rusqlite::Result<()> {
        let stored = self.stored_dir_sigs(c)?;
        let after = self.dir_sigs();
        for (i, prefix) in DIRS.iter().enumerate() {
            if stored[i] == Some(before[i]) && after[i] != before[i] {
                self.store_dir_sig(c, prefix, Some(after[i]))?;
            }
        }
        Ok(())
    }

    /// The first free file name for `base` in directory `prefix` (`""` or `"archive/"`,
    /// `docs/formats.md#unique-paths`): `B.md`, `B-2.md`, … that neither the file system (exact
    /// name) nor the index (ignoring case) has. Without a trusted signature of the directory, the
    /// directory is listed ([`elroy_markdown::unique_path`]). `except` (a file name of the
    /// directory) does not count as taken on the file system: the file a memory update is about
    /// to replace.
    pub(crate) fn free_path(
        &self,
        c: &Connection,
        prefix: &str,
        base: &str,
        except: Option<&str>,
    ) -> Result<PathBuf, MemoryError> {
        let dir = self.dir_path(prefix);
        let i = DIRS.iter().position(|p| *p == prefix).unwrap_or(0);
        let trusted = self.stored_dir_sigs(c)?[i] == Some(dir_signature(&dir));
        if !trusted {
            return Ok(elroy_markdown::unique_path(
                &dir,
                base,
                except,
                &self.display(&dir),
            )?);
        }
        let mut failure = None;
        let name = elroy_markdown::unique_file_name(base, |candidate| {
            if except != Some(candidate) && std::fs::symlink_metadata(dir.join(candidate)).is_ok() {
                return true;
            }
            match name_in_index(c, self.opts.user_id, &format!("{prefix}{candidate}")) {
                Ok(taken) => taken,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failure {
            return Err(e.into());
        }
        Ok(dir.join(name))
    }
}
