//! The directory index the markdown stores share: which entries of a store directory are store
//! files ([`is_md_name`], [`list_md_dir`]), and what changed since the signatures an index kept
//! ([`changes_since`]). The stat signature itself is [`FileStamp`]; the tables that keep it
//! stay with each store (the agenda's and memories' rows in `state.db`, the versioned home's
//! `.git/elroy-walk.json`).
//!
//! # Symbolic links
//!
//! A symlink named `*.md` in a store directory is **not a store file**: it is not followed, not
//! read and not indexed; it only takes its name (an index lists it in
//! [`MdListing::others_lower`], so no new file is written over it). Before this rule the stores
//! disagreed: the agenda followed such a link and read its target as an item, the feature
//! requests listed it the same way, the memory index skipped it, and the versioned home commits
//! the link itself (git versions links as links). Following a link is the unsafe choice: the
//! target can be anywhere (`~/.ssh/id_ed25519`, another person's home), store reads do not pass
//! the permission gate the file tools pass, and what a store reads is indexed, searched and sent
//! to the model. Not following it is what the memory index and git already did, so every store
//! now agrees with them: a store reads and writes only regular files inside its directory, and
//! its atomic writes (rename over the name) never write through a link. The store directory
//! itself may be a link (a home on another disk): [`FileStamp::of_dir`] follows it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::{FileStamp, MarkdownError};

/// Whether `name` (a file name, no directory) names a store file: it ends in `.md` (exact case)
/// and is not hidden (atomic-write temporaries and editor swap files start with `.`).
pub fn is_md_name(name: &str) -> bool {
    name.ends_with(".md") && !name.starts_with('.')
}

/// One listing of a store directory: one `readdir`, the file types and inodes it returns, no
/// file `stat`ed or opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MdListing {
    /// `(file name, inode)` of each store file ([`is_md_name`], a regular file by the listing's
    /// file type: symlinks are not store files, see the module documentation), sorted by name
    /// (byte order). The inode is the one `readdir` gives (`None` off Unix, where it has none).
    pub files: Vec<(String, Option<i64>)>,
    /// Lower-cased names of the other entries whose lower-cased name ends in `.md` (a directory
    /// `x.md`, a file `X.MD`, a symlink `y.md`, a hidden `.z.md`), sorted: they take a name under
    /// the unique-path rule (`docs/formats.md#unique-paths`, names compared ignoring case)
    /// without being store files.
    pub others_lower: Vec<String>,
}

/// Lists `dir` ([`MdListing`]). A missing directory lists as empty; names that are not UTF-8 are
/// left out (no store writes one).
///
/// # Errors
/// [`MarkdownError::Read`] naming `display` when the directory exists but cannot be read.
pub fn list_md_dir(dir: &Path, display: &str) -> Result<MdListing, MarkdownError> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(MdListing::default()),
        Err(e) => {
            return Err(MarkdownError::Read {
                file: display.to_owned(),
                message: e.to_string(),
            });
        }
    };
    let mut listing = MdListing::default();
    for dirent in read.flatten() {
        let name = dirent.file_name();
        let Some(name) = name.to_str() else { continue };
        // `file_type` comes from the listing on the usual file systems (no `stat`); it does not
        // follow a symlink.
        let Ok(kind) = dirent.file_type() else {
            continue;
        };
        if is_md_name(name) && kind.is_file() {
            #[cfg(unix)]
            let ino = {
                use std::os::unix::fs::DirEntryExt;
                Some(dirent.ino() as i64)
            };
            #[cfg(not(unix))]
            let ino = None;
            listing.files.push((name.to_owned(), ino));
        } else {
            let lower = name.to_lowercase();
            if lower.ends_with(".md") {
                listing.others_lower.push(lower);
            }
        }
    }
    listing.files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    listing.others_lower.sort_unstable();
    Ok(listing)
}

/// What changed in a directory since an index's last look at it ([`changes_since`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Listed files the index has no row for, or whose listed inode is not the row's (a file
    /// renamed over it, as editors and `git checkout` do), with their signatures now, by name.
    /// The caller reads them.
    pub changed: Vec<(String, FileStamp)>,
    /// Names the index has a row for that are no longer store files (gone, or replaced by a
    /// directory or a symlink), in no particular order.
    pub removed: Vec<String>,
}

/// The diff of `listing` (of `dir`) against what an index knows: `known` maps each file name the
/// index has a row for to the inode it recorded (`None`: not trusted, as a racy signature or
/// one never taken). Only files whose listed inode differs from the known one are `stat`ed
/// (`on_stat` is called for each, for counters); a file whose full signature shows the known
/// inode after all (a file system whose listing reports other inode numbers than `stat`) is
/// unchanged.
pub fn changes_since(
    dir: &Path,
    listing: &MdListing,
    known: &HashMap<String, Option<i64>>,
    mut on_stat: impl FnMut(),
) -> Changes {
    let mut listed: HashSet<&str> = HashSet::with_capacity(listing.files.len());
    let mut changes = Changes::default();
    for (name, ino) in &listing.files {
        let row = known.get(name);
        if row.is_some_and(|r| r.is_some() && r == ino) {
            listed.insert(name.as_str());
            continue;
        }
        on_stat();
        let Some(stamp) = FileStamp::of_file(&dir.join(name)) else {
            // Gone (or no longer a regular file) between the listing and now.
            continue;
        };
        listed.insert(name.as_str());
        if row.is_some_and(|r| *r == Some(stamp.ino)) {
            continue;
        }
        changes.changed.push((name.clone(), stamp));
    }
    changes.removed = known
        .keys()
        .filter(|name| !listed.contains(name.as_str()))
        .cloned()
        .collect();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wall_clock_ns;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn known_of(listing: &MdListing) -> HashMap<String, Option<i64>> {
        listing.files.iter().cloned().collect()
    }

    #[test]
    fn names_of_store_files() {
        for yes in ["a.md", "Water_the_plants.md", "x.y.md", "ü.md"] {
            assert!(is_md_name(yes), "{yes}");
        }
        for no in [
            ".a.md",
            ".x.md.tmp-1-abcd",
            "a.MD",
            "a.txt",
            "a.md.swp",
            "md",
            "",
        ] {
            assert!(!is_md_name(no), "{no}");
        }
    }

    #[test]
    fn listing_keeps_regular_md_files_and_names_the_others() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.md", "b");
        write(dir.path(), "a.md", "a");
        write(dir.path(), "notes.txt", "not a store file");
        write(dir.path(), "C.MD", "other case");
        write(dir.path(), ".hidden.md", "hidden");
        std::fs::create_dir(dir.path().join("d.md")).unwrap();
        let listing = list_md_dir(dir.path(), "agenda").unwrap();
        let names: Vec<&str> = listing.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a.md", "b.md"]);
        assert_eq!(listing.others_lower, [".hidden.md", "c.md", "d.md"]);
        #[cfg(unix)]
        for (name, ino) in &listing.files {
            assert_eq!(
                *ino,
                Some(FileStamp::of_file(&dir.path().join(name)).unwrap().ino)
            );
        }
    }

    #[test]
    fn a_missing_directory_lists_as_empty_and_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            list_md_dir(&dir.path().join("none"), "none").unwrap(),
            MdListing::default()
        );
        write(dir.path(), "plain", "not a directory");
        let err = list_md_dir(&dir.path().join("plain"), "plain").unwrap_err();
        assert!(
            matches!(&err, MarkdownError::Read { file, .. } if file == "plain"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_not_a_store_file_but_takes_its_name() {
        let outside = tempfile::tempdir().unwrap();
        write(
            outside.path(),
            "secret.md",
            "---\nname: secret\n---\n\nkey\n",
        );
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "real.md", "real");
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("Link.md"))
            .unwrap();
        let listing = list_md_dir(dir.path(), "memories").unwrap();
        let names: Vec<&str> = listing.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["real.md"]);
        assert_eq!(listing.others_lower, ["link.md"]);
        // Not stat'ed through the link either.
        assert_eq!(FileStamp::of_file(&dir.path().join("Link.md")), None);
        // A known file replaced by a link is removed from the index's view.
        let mut known = known_of(&listing);
        known.insert("Link.md".to_owned(), Some(1));
        let changes = changes_since(dir.path(), &listing, &known, || {});
        assert_eq!(changes.removed, ["Link.md"]);
        assert!(changes.changed.is_empty());
    }

    #[test]
    fn changes_since_names_new_replaced_and_removed_files_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "same.md", "same");
        write(dir.path(), "replaced.md", "old");
        write(dir.path(), "removed.md", "gone soon");
        let before = list_md_dir(dir.path(), "agenda").unwrap();
        let known = known_of(&before);
        // Replaced by rename (a new inode, as an editor does); one new file; one removed.
        write(dir.path(), "tmp", "new");
        std::fs::rename(dir.path().join("tmp"), dir.path().join("replaced.md")).unwrap();
        write(dir.path(), "new.md", "new");
        std::fs::remove_file(dir.path().join("removed.md")).unwrap();
        let after = list_md_dir(dir.path(), "agenda").unwrap();
        let mut stats = 0;
        let changes = changes_since(dir.path(), &after, &known, || stats += 1);
        let changed: Vec<&str> = changes.changed.iter().map(|(n, _)| n.as_str()).collect();
        if cfg!(unix) {
            assert_eq!(changed, ["new.md", "replaced.md"]);
            // `same.md` kept its inode: not stat'ed.
            assert_eq!(stats, 2);
        } else {
            assert!(changed.contains(&"new.md"));
        }
        assert_eq!(changes.removed, ["removed.md"]);
        let (_, stamp) = &changes.changed[0];
        assert_eq!(Some(*stamp), FileStamp::of_file(&dir.path().join("new.md")));
    }

    #[test]
    fn an_untrusted_row_is_checked_by_its_full_signature() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.md", "a");
        let listing = list_md_dir(dir.path(), "agenda").unwrap();
        // A racy row (no trusted inode) is stat'ed and reported so that it is read again.
        let known: HashMap<String, Option<i64>> = [("a.md".to_owned(), None)].into();
        let changes = changes_since(dir.path(), &listing, &known, || {});
        assert_eq!(changes.changed.len(), 1);
        assert!(changes.removed.is_empty());
    }

    #[test]
    fn a_file_edited_in_place_changes_its_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        std::fs::write(&path, "one").unwrap();
        let before = FileStamp::of_file(&path).unwrap();
        std::fs::write(&path, "two, longer").unwrap();
        let after = FileStamp::of_file(&path).unwrap();
        assert_ne!(before, after);
        assert_eq!(after.size, 11);
        assert_eq!(before.ino, after.ino);
    }

    #[test]
    fn a_fresh_stamp_is_racy_and_an_old_one_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        std::fs::write(&path, "one").unwrap();
        let stamp = FileStamp::of_file(&path).unwrap();
        let now = wall_clock_ns();
        // Written just now: racy, not kept.
        assert!(stamp.is_racy(now));
        assert_eq!(stamp.trusted(now), None);
        // Three seconds later by the wall clock it is clean.
        let later = stamp.mtime_ns + 3_000_000_000;
        assert!(!stamp.is_racy(later));
        assert_eq!(stamp.trusted(later), Some(stamp));
        // A stamp from the future is never trusted.
        assert_eq!(stamp.trusted(stamp.mtime_ns - 1), None);
    }

    #[test]
    fn a_stamp_token_reads_back_and_older_forms_do_not() {
        let stamp = FileStamp {
            size: 0,
            mtime_ns: 1_700_000_000_123_456_789,
            ino: 42,
            ctime_ns: -1,
        };
        assert_eq!(FileStamp::parse_token(&stamp.token()), Some(stamp));
        for other in [
            "1700000000123456789 42",
            "",
            "0 1 2 3 4",
            "0 1 x 3",
            "0  1 2 3",
        ] {
            assert_eq!(FileStamp::parse_token(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_removed_file_or_a_non_file_has_no_file_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        std::fs::write(&path, "one").unwrap();
        assert!(FileStamp::of_file(&path).is_some());
        std::fs::remove_file(&path).unwrap();
        assert_eq!(FileStamp::of_file(&path), None);
        assert_eq!(FileStamp::of_file(dir.path()), None);
        assert!(FileStamp::of_dir(dir.path()).is_some());
        std::fs::write(&path, "one").unwrap();
        assert_eq!(FileStamp::of_dir(&path), None);
    }

    #[test]
    fn a_directory_stamp_changes_when_an_entry_is_added() {
        let dir = tempfile::tempdir().unwrap();
        // An old modification time, so that the change cannot fall in the same clock tick.
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        std::fs::File::open(dir.path())
            .unwrap()
            .set_modified(old)
            .unwrap();
        let before = FileStamp::of_dir(dir.path()).unwrap();
        assert_eq!(before.size, 0);
        assert_eq!(before.mtime_ns, 1_000_000_000 * 1_000_000_000);
        std::fs::write(dir.path().join("a.md"), "a").unwrap();
        let after = FileStamp::of_dir(dir.path()).unwrap();
        assert_ne!(before, after);
        assert_eq!(before.ino, after.ino);
    }
}
