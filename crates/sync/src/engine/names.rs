//! `sync: names`: the identities a file carries to other machines, written before the first push
//! of each file: agenda files get a [`UID_KEY`], memory files their name from this machine's
//! index, and each user's names go into their names file ([`crate::people`]).

use elroy_history::{GitWrite, VersionedHome, machine_signature};
use elroy_markdown::{Document, Value};
use git2::{ObjectType, Oid, Repository, Tree};
use rusqlite::Connection;

use super::SyncOptions;
use super::branch_name;
use super::report::ChangeKind;
use super::trees::{blob_bytes, changes, write_file};
use crate::merge::FileKind;
use crate::transport;
use crate::{SyncError, identity, index};

/// The front-matter key that identifies an agenda or due item across machines and renames: a
/// string elroy writes once (the first sync of the file) and never changes; Elroy 0.5.0 ignores it.
pub const UID_KEY: &str = "uid";

/// The `uid` of an agenda file, if it has one.
pub(super) fn uid_of(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, "uid").ok()?;
    match doc.front_matter.get(UID_KEY)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// `bytes` (the agenda file at `path`) with a `uid` line added to its front matter, in key order
/// (the keys elroy and Elroy 0.5.0 write are sorted), every other byte as it was; `None` when it
/// has one already or its front matter does not parse. The uid is derived from the path and the
/// content (UUID-shaped hex of their SHA-1), so two machines that hold the same file before their
/// first sync give it the same uid.
fn with_uid(path: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, path).ok()?;
    if !doc.has_front_matter || doc.front_matter.get(UID_KEY).is_some() {
        return None;
    }
    let mut seed = format!("elroy uid\0{path}\0").into_bytes();
    seed.extend_from_slice(bytes);
    let hex = Oid::hash_object(ObjectType::Blob, &seed).ok()?.to_string();
    let uid = format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    let line = format!(
        "{UID_KEY}: {}\n",
        elroy_markdown::emit_yaml_scalar_string(&uid)
    );
    // Before the first top-level key that sorts after `uid`, else at the end.
    let mut yaml = String::new();
    let mut placed = false;
    for raw in doc.raw_yaml.split_inclusive('\n') {
        let key = raw
            .split_once(':')
            .map(|(k, _)| k)
            .filter(|k| !k.starts_with([' ', '\t', '-', '#']) && !k.is_empty());
        if !placed && key.is_some_and(|k| k > UID_KEY) {
            yaml.push_str(&line);
            placed = true;
        }
        yaml.push_str(raw);
    }
    if !placed {
        if !yaml.is_empty() && !yaml.ends_with('\n') {
            yaml.push('\n');
        }
        yaml.push_str(&line);
    }
    let out = format!("---\n{yaml}---\n{}", doc.raw_body);
    // Never a file that reads differently: the same keys plus the uid.
    let check = Document::parse(&out, path).ok()?;
    let mut expected = doc.front_matter.clone();
    expected.insert(UID_KEY, Value::String(uid));
    (check.front_matter == expected && check.raw_body == doc.raw_body).then(|| out.into_bytes())
}

/// Gives each agenda file (agenda and due items) changed since the last sync that has no `uid`
/// front-matter key one ([`with_uid`]: the identity that tells a renamed item from a new one on
/// another machine), and writes each memory's name (from this machine's index) into its file as
/// the front-matter key
/// `name` (`docs/formats.md#memory-index-sync`: the memory index names a memory it does not know by
/// that key), for the memory files changed since the last sync (all of them at the first), and the
/// users' names ([`crate::people`]), committed as `sync: names` together with the removal of
/// sibling files (`*.sync-conflict-*`) deleted by hand. A file whose front matter does not parse is
/// left alone.
pub(super) fn write_names(
    home: &VersionedHome,
    options: &SyncOptions,
    notes: &mut Vec<String>,
) -> Result<(), SyncError> {
    let conn = index::open_for_names(options.db.as_deref());
    let root = home.root();
    let lock = GitWrite::begin(root)?;
    notes.extend(lock.notes().iter().cloned());
    let repo = Repository::open(root)?;
    let branch = branch_name(&repo)?;
    let head = repo.head()?.peel_to_commit()?;
    let since = repo
        .refname_to_id(&transport::tracking_ref(&branch))
        .ok()
        .and_then(|id| repo.find_commit(id).ok())
        .map(|c| c.tree())
        .transpose()?;
    let head_tree = head.tree()?;
    let mut files = Vec::new();
    for change in changes(&repo, since.as_ref(), &head_tree)? {
        if change.kind == ChangeKind::Deleted {
            continue;
        }
        let Some(bytes) = blob_bytes(&repo, &head_tree, &change.path)? else {
            continue;
        };
        // Only files as committed: a hand edit made since is the next sync's.
        if std::fs::read(root.join(&change.path)).ok().as_deref() != Some(bytes.as_slice()) {
            continue;
        }
        if let Some(named) = with_identity(&change.path, &bytes, conn.as_ref()) {
            files.push((change.path, named));
        }
    }
    let gone = siblings_deleted_by_hand(root, &head_tree)?;
    files.extend(people_files(&repo, &head_tree, options)?);
    if files.is_empty() && gone.is_empty() {
        return Ok(());
    }
    let id = commit_names(&repo, &head, &files, &gone, options)?;
    for (path, bytes) in &files {
        write_file(root, path, bytes)?;
    }
    let head_ref = repo.head()?.name().unwrap_or("refs/heads/main").to_owned();
    repo.reference_matching(&head_ref, id, true, head.id(), "elroy sync: names")?;
    let mut paths: Vec<String> = files.into_iter().map(|(p, _)| p).collect();
    paths.extend(gone);
    elroy_history::refresh_index(root, &paths)?;
    Ok(())
}

/// The committed store file `path` (`bytes`) with the identity it lacks: an agenda file with a
/// `uid`, a memory file with its `name` from this machine's index (`conn`). `None` when it
/// needs none or cannot get one.
fn with_identity(path: &str, bytes: &[u8], conn: Option<&Connection>) -> Option<Vec<u8>> {
    if FileKind::of(path) == FileKind::Agenda
        && let Some(with_uid) = with_uid(path, bytes)
    {
        return Some(with_uid);
    }
    let prefix = identity::memory_prefix(path)?;
    let id = identity::memory_id(bytes)?;
    let name = index::memory_name(conn?, &index::token_of(&prefix), id)?;
    let text = std::str::from_utf8(bytes).ok()?;
    let mut doc = Document::parse(text, path).ok()?;
    if doc.front_matter.get("name").is_some() {
        // Present: written by a person (a hand edit of the name is theirs, never reverted)
        // or by an earlier sync. Only a missing name is added.
        return None;
    }
    doc.front_matter.insert("name", Value::String(name));
    Some(doc.render(true).into_bytes())
}

/// Sibling files deleted by hand (merged by the person, as the report asks) leave the
/// repository too; they are not store paths, so no other commit removes them.
fn siblings_deleted_by_hand(
    root: &std::path::Path,
    head_tree: &Tree<'_>,
) -> Result<Vec<String>, SyncError> {
    let mut gone: Vec<String> = Vec::new();
    head_tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if let Ok(name) = entry.name()
            && name.contains(".sync-conflict-")
            && entry.kind() == Some(ObjectType::Blob)
        {
            let path = format!("{dir}{name}");
            if !root.join(&path).exists() {
                gone.push(path);
            }
        }
        git2::TreeWalkResult::Ok
    })?;
    Ok(gone)
}

/// The users' names (full, preferred) in their names files, where they differ from HEAD's.
fn people_files(
    repo: &Repository,
    head_tree: &Tree<'_>,
    options: &SyncOptions,
) -> Result<Vec<(String, Vec<u8>)>, SyncError> {
    let mut files = Vec::new();
    for (token, names) in crate::people::local(options.db.as_deref())? {
        let path = crate::people::path_of(&token);
        let Some(bytes) = crate::people::render(&names) else {
            continue;
        };
        if blob_bytes(repo, head_tree, &path)?.as_deref() != Some(bytes.as_slice()) {
            files.push((path, bytes));
        }
    }
    Ok(files)
}

/// The `sync: names` commit over `head` (not yet on the branch): `files` written, `gone` removed.
fn commit_names(
    repo: &Repository,
    head: &git2::Commit<'_>,
    files: &[(String, Vec<u8>)],
    gone: &[String],
    options: &SyncOptions,
) -> Result<Oid, SyncError> {
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, bytes) in files {
        let blob = repo.blob(bytes)?;
        update.upsert(path.as_str(), blob, git2::FileMode::Blob);
    }
    for path in gone {
        update.remove(path.as_str());
    }
    let tree = repo.find_tree(update.create_updated(repo, &head.tree()?)?)?;
    let sig = machine_signature(options.now)?;
    let mut message = "sync: names\n\n".to_owned();
    for (path, _) in files {
        message.push_str(path);
        message.push('\n');
    }
    for path in gone {
        message.push_str(&format!("{path} (deleted)\n"));
    }
    Ok(repo.commit(None, &sig, &sig, &message, &tree, &[head])?)
}
