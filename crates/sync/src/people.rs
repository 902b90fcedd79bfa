//! User names across machines: the full and preferred name of each user live in
//! this machine's `state.db` (`user_preferences`, `docs/formats.md#users-and-preferences`), which
//! never syncs, so `elroy sync` carries them in a small file of each user home, [`USER_NAMES_FILE`]
//! (`user-names.yaml` at the top of the home for `DEFAULT`, `users/TOKEN/user-names.yaml` for
//! the others):
//!
//! ```yaml
//! full_name: Ada Lovelace
//! preferred_name: Ada
//! ```
//!
//! Only the sync writes it: before pushing, from this machine's names when they differ from the
//! committed file (a key is written only when the name is set); after pulling a changed file,
//! into this machine's `state.db` (before the files are written, so a kill never lets old names
//! overwrite pulled ones). No store reads it, and the versioned home's status walk ignores it.

use std::path::Path;

use elroy_db::{Db, PreferenceField};
use elroy_markdown::{Document, Mapping, Value};
use jiff::Timestamp;

use crate::SyncError;

/// The file name of a user home's names file.
pub const USER_NAMES_FILE: &str = "user-names.yaml";

/// The names file of the user `token`, relative to the home.
pub(crate) fn path_of(token: &str) -> String {
    if token == "DEFAULT" {
        USER_NAMES_FILE.to_owned()
    } else {
        format!("users/{token}/{USER_NAMES_FILE}")
    }
}

/// The user token whose names file `path` is, if it is one.
pub(crate) fn token_of(path: &str) -> Option<String> {
    if path == USER_NAMES_FILE {
        return Some("DEFAULT".to_owned());
    }
    let rest = path.strip_prefix("users/")?;
    let (token, file) = rest.split_once('/')?;
    (file == USER_NAMES_FILE && !token.is_empty()).then(|| token.to_owned())
}

/// A user's names: (full, preferred).
pub(crate) type Names = (Option<String>, Option<String>);

/// The file's text for `names`; `None` when neither is set.
pub(crate) fn render(names: &Names) -> Option<Vec<u8>> {
    let mut map = Mapping::new();
    if let Some(full) = &names.0 {
        map.insert("full_name", Value::String(full.clone()));
    }
    if let Some(preferred) = &names.1 {
        map.insert("preferred_name", Value::String(preferred.clone()));
    }
    if map.is_empty() {
        return None;
    }
    let mut text = elroy_markdown::emit_yaml(&map, true);
    text.push('\n');
    Some(text.into_bytes())
}

/// The names in a file's content (a key that is missing or not a string: not set).
pub(crate) fn parse(bytes: &[u8]) -> Names {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return (None, None);
    };
    let Ok(doc) = Document::parse(&format!("---\n{text}\n---\n"), USER_NAMES_FILE) else {
        return (None, None);
    };
    let get = |key: &str| {
        doc.front_matter
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .filter(|s| !s.trim().is_empty())
    };
    (get("full_name"), get("preferred_name"))
}

/// Every user of this machine's `state.db` with a name set: (token, names).
pub(crate) fn local(db: Option<&Path>) -> Result<Vec<(String, Names)>, SyncError> {
    let Some(path) = db.filter(|p| p.exists()) else {
        return Ok(Vec::new());
    };
    let db = Db::open(path).map_err(|e| SyncError::Index(e.to_string()))?;
    db.with_conn(|c| {
        let mut stmt = c.prepare(
            "SELECT u.token, p.full_name, p.preferred_name FROM users u \
             JOIN user_preferences p ON p.user_id = u.id \
             WHERE p.full_name IS NOT NULL OR p.preferred_name IS NOT NULL ORDER BY u.token",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, (row.get(1)?, row.get(2)?)))
        })?;
        rows.collect::<Result<Vec<_>, _>>()
    })
    .map_err(|e| SyncError::Index(e.to_string()))
}

/// Sets the names of `token` in this machine's `state.db` to the pulled `names` (a name the file
/// does not set is left as it is).
pub(crate) fn import(
    db: Option<&Path>,
    token: &str,
    names: &Names,
    now: Timestamp,
) -> Result<(), SyncError> {
    // Created when this machine has none yet (its first sync).
    let Some(path) = db else {
        return Ok(());
    };
    let fail = |e: elroy_db::DbError| SyncError::Index(e.to_string());
    let db = Db::open(path).map_err(fail)?;
    let user = db.ensure_user(token, now).map_err(fail)?;
    if let Some(full) = &names.0 {
        db.set_preference(user, PreferenceField::FullName, Some(full), now)
            .map_err(fail)?;
    }
    if let Some(preferred) = &names.1 {
        db.set_preference(user, PreferenceField::PreferredName, Some(preferred), now)
            .map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_the_file() {
        let names = (
            Some("Ada King: Countess".to_owned()),
            Some("Ada".to_owned()),
        );
        let bytes = render(&names).unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "full_name: 'Ada King: Countess'\npreferred_name: Ada\n"
        );
        assert_eq!(parse(&bytes), names);
        assert_eq!(render(&(None, None)), None);
        assert_eq!(parse(b"preferred_name: [1]\n"), (None, None));
    }

    #[test]
    fn paths_and_tokens() {
        assert_eq!(path_of("DEFAULT"), "user-names.yaml");
        assert_eq!(path_of("alice"), "users/alice/user-names.yaml");
        assert_eq!(
            token_of("users/alice/user-names.yaml").as_deref(),
            Some("alice")
        );
        assert_eq!(token_of("user-names.yaml").as_deref(), Some("DEFAULT"));
        assert_eq!(token_of("agenda/user-names.yaml"), None);
    }
}
