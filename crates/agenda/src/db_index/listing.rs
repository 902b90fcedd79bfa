//! The directory check of an operation: the folder's signature, and when it changed, one
//! listing diffed against the rows.

use std::collections::HashMap;

use elroy_db::rusqlite::{self};
use elroy_markdown::{MdListing, changes_since, list_md_dir};

use super::*;

/// The `meta` value of a directory check: the signature of `agenda/` ([`FileStamp::token`]),
/// then the lower-cased names of its non-item `*.md` entries, one a line.
fn dir_meta_value(sig: &FileStamp, others: &[String]) -> String {
    let mut value = sig.token();
    for name in others {
        value.push('\n');
        value.push_str(name);
    }
    value
}

/// The hash of one directory entry in the digest of `agenda_names:{user id}`: FNV-1a (64 bits)
/// of the name, a zero byte and the inode (`None`, a symlink, as -1). The digest is the wrapping
/// sum over the entries, so an entry is added or taken out without the others.
fn entry_hash(name: &str, ino: Option<i64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let ino = ino.unwrap_or(-1).to_le_bytes();
    for b in name.bytes().chain([0]).chain(ino) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl DbIndex {
    /// Records changes elroy made to the directory's entries, `(file name, inode)` removed and
    /// added, in the digest of the entries the rows stand for (`meta` key
    /// `agenda_names:{user id}`), so the next listing that finds only these changes needs no
    /// diff. An unknown inode drops the digest (the next listing diffs). Call inside the home
    /// lock, with the rows already updated ([`DbIndex::created`] and the others).
    pub(crate) fn entries_changed(
        &self,
        removed: &[(&str, Option<i64>)],
        added: &[(&str, Option<i64>)],
    ) {
        let key = self.names_key();
        let Ok(Some(stored)) = self.meta_get(&key) else {
            return;
        };
        let known = removed.iter().chain(added).all(|(_, ino)| ino.is_some());
        let Some(mut digest) = stored.parse::<u64>().ok().filter(|_| known) else {
            self.meta_set(&key, None);
            return;
        };
        for (name, ino) in removed {
            digest = digest.wrapping_sub(entry_hash(name, *ino));
        }
        for (name, ino) in added {
            digest = digest.wrapping_add(entry_hash(name, *ino));
        }
        self.meta_set(&key, Some(&digest.to_string()));
    }

    /// Starts an operation (inside the home lock): brings the rows up to date with the
    /// directory's entries when the directory changed since the last check (`full`: always),
    /// and returns the files found unreadable on the way (`(display path, message)`).
    ///
    /// # Errors
    /// A directory that cannot be listed; database failures.
    pub(crate) fn begin(
        &self,
        dir: &Path,
        prefix: &str,
        full: bool,
    ) -> Result<Vec<(String, String)>, AgendaError> {
        self.reset();
        // The directory's signature before its listing: a change during the listing leaves the
        // stored signature behind, so the next operation lists again.
        let sig = FileStamp::of_dir(dir);
        let key = self.meta_key();
        let stored = self.meta_get(&key)?;
        if let (Some(sig), Some(stored), false) = (&sig, &stored, full) {
            let mut lines = stored.lines();
            if lines.next().and_then(FileStamp::parse_token) == Some(*sig) {
                *self
                    .others_lower
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    lines.map(str::to_owned).collect();
                return Ok(Vec::new());
            }
        }
        let listing = list_md_dir(dir, prefix.trim_end_matches('/'))?;
        // The entries as the rows stand for them: when the listing finds exactly those (the
        // directory changed only by elroy's own writes), no diff is needed.
        let digest = listing
            .files
            .iter()
            .fold(0u64, |d, (name, ino)| {
                d.wrapping_add(entry_hash(name, *ino))
            })
            .to_string();
        let names_key = self.names_key();
        let problems = if !full && self.meta_get(&names_key)?.as_deref() == Some(digest.as_str()) {
            Vec::new()
        } else {
            let (problems, saved) = self.sync_listing(dir, prefix, &listing)?;
            self.meta_set(&names_key, saved.then_some(digest.as_str()));
            problems
        };
        let wall = wall_clock_ns();
        if let Some(sig) = sig.filter(|s| !s.is_racy(wall)) {
            let value = dir_meta_value(&sig, &listing.others_lower);
            if stored.as_deref() != Some(value.as_str()) {
                self.meta_set(&key, Some(&value));
            }
        }
        *self
            .others_lower
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = listing.others_lower;
        Ok(problems)
    }

    /// Diffs a listing against the live rows: files without a row, or whose inode is not the
    /// row's, are read; rows without a file are marked deleted.
    pub(super) fn sync_listing(
        &self,
        dir: &Path,
        prefix: &str,
        listing: &MdListing,
    ) -> Result<(Vec<(String, String)>, bool), AgendaError> {
        let user = self.user_id;
        // (file name) -> (id, stored inode)
        let rows: HashMap<String, (i64, Option<i64>)> = self
            .db
            .with_conn(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT stem, id, file_ino, file_mtime_ns FROM agenda_items \
                     WHERE user_id = ?1 AND status <> 'deleted'",
                )?;
                stmt.query_map([user], |r| {
                    let stem: String = r.get(0)?;
                    let ino: Option<i64> = r.get(2)?;
                    let mtime: Option<i64> = r.get(3)?;
                    Ok((
                        file_name_of(&stem),
                        (r.get(1)?, ino.filter(|_| mtime.is_some())),
                    ))
                })?
                .collect::<rusqlite::Result<HashMap<_, _>>>()
            })
            .map_err(IndexError::from)?;
        let inodes: HashMap<String, Option<i64>> = rows
            .iter()
            .map(|(name, (_, ino))| (name.clone(), *ino))
            .collect();
        let changes = changes_since(dir, listing, &inodes, || {
            self.files_checked.fetch_add(1, Ordering::Relaxed);
        });
        if changes.changed.is_empty() && changes.removed.is_empty() {
            return Ok((Vec::new(), true));
        }
        let known: Known = rows.into_iter().map(|(name, (id, _))| (name, id)).collect();
        let (parsed, problems) = self.read_files(dir, prefix, changes.changed, &HashMap::new());
        // The table is a cache of the files: when it cannot be written (a full disk), this
        // process goes on, and the next one reads those files again.
        let saved = self
            .write_changes(&known, &parsed, &changes.removed)
            .is_ok();
        Ok((problems, saved))
    }
}
