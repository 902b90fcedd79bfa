//! The search rows of items (`recall_fts`, `recall_grams`; `docs/formats.md#search-index-and-embeddings`):
//! their rowids, writing and removing one item's rows, replacing a whole kind's.

use rusqlite::Connection;

/// Writes the search rows of one item: `recall_fts` (name, body and the UNINDEXED columns) and,
/// when the name or body has characters of a script written without spaces, `recall_grams`
/// (their bigrams). Both rows must have been removed before ([`delete_fts_row`]).
///
/// # Errors
/// `rusqlite::Error`.
pub fn insert_fts_row(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    item_id: i64,
    name: &str,
    body: &str,
) -> rusqlite::Result<()> {
    let rowid = fts_rowid(user_id, kind, item_id);
    conn.prepare_cached(
        "INSERT INTO recall_fts (rowid, name, body, kind, user_id, item_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![rowid, name, body, kind, user_id, item_id])?;
    let grams = elroy_db::grams::index_text(&format!("{name}\n{body}"));
    if !grams.is_empty() {
        conn.prepare_cached("INSERT INTO recall_grams (rowid, grams) VALUES (?1, ?2)")?
            .execute(rusqlite::params![rowid, grams])?;
    }
    Ok(())
}

/// Removes the search rows (`recall_fts` and `recall_grams`) of one item.
///
/// # Errors
/// `rusqlite::Error`.
pub fn delete_fts_row(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    item_id: i64,
) -> rusqlite::Result<()> {
    let rowid = fts_rowid(user_id, kind, item_id);
    conn.prepare_cached("DELETE FROM recall_fts WHERE rowid = ?1")?
        .execute([rowid])?;
    conn.prepare_cached("DELETE FROM recall_grams WHERE rowid = ?1")?
        .execute([rowid])?;
    Ok(())
}

/// The `recall_fts` rowid of an item: `(user_id << 40) | (item_id << 1) | k`, `k` = 0 for
/// memories and 1 for agenda items. A fixed rowid makes replacing or removing an item's row a
/// rowid lookup (the `kind`, `user_id` and `item_id` columns are `UNINDEXED`). Ids must stay
/// below 2^39 and user ids below 2^23.
pub fn fts_rowid(user_id: i64, kind: &str, item_id: i64) -> i64 {
    (user_id << 40) | (item_id << 1) | i64::from(kind != crate::store::KIND)
}

/// One item for [`replace_fts_items`]: its id, name and rendering (`docs/formats.md#renderings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsItem {
    /// The item id (`recall_metadata.memory_id`).
    pub id: i64,
    /// The item name.
    pub name: String,
    /// The rendering (search text).
    pub body: String,
}

/// Replaces every `recall_fts` (and `recall_grams`) row of `user_id` and `kind` (`agenda` for agenda and due items)
/// with `items`, in one transaction: the search index of a store that keeps no index of its own.
/// Pass only active items (`docs/formats.md#search-index-and-embeddings`). Nothing is written when
/// `items` are those of the last replacement (an MD5 digest of ids, names and bodies kept in
/// `meta`): every recall and `examine_memories` call passes the whole agenda, and rewriting 10,000
/// rows each time cost ~10,000 page writes per question on a large home.
///
/// # Errors
/// `rusqlite::Error`.
pub fn replace_fts_items(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    items: &[FtsItem],
) -> rusqlite::Result<()> {
    replace_fts_items_inner(conn, user_id, kind, items, None)
}

/// The `meta` key of the source stamp of `kind`'s rows (see [`fts_source`]).
fn source_key(user_id: i64, kind: &str) -> String {
    format!("fts_source:{user_id}:{kind}")
}

/// The source stamp recorded by the last [`replace_fts_items_from`] for `user_id` and `kind`
/// (`None`: never, or the rows were replaced without one since): what the caller's store was
/// when the rows were built (for the agenda: its version and the time zone of the renderings).
/// Equal to the store's current stamp: the rows are current and need no rebuild.
///
/// # Errors
/// `rusqlite::Error`.
pub fn fts_source(conn: &Connection, user_id: i64, kind: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [source_key(user_id, kind)],
        |r| r.get(0),
    )
    .optional()
}

/// [`replace_fts_items`], recording `source` (the stamp of the store state `items` come from)
/// in the same transaction, for [`fts_source`]: a caller whose store has not changed since
/// skips loading its items (recall and `examine_memories` no longer read the whole
/// agenda per question).
///
/// # Errors
/// `rusqlite::Error`.
pub fn replace_fts_items_from(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    source: &str,
    items: &[FtsItem],
) -> rusqlite::Result<()> {
    replace_fts_items_inner(conn, user_id, kind, items, Some(source))
}

fn replace_fts_items_inner(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    items: &[FtsItem],
    source: Option<&str>,
) -> rusqlite::Result<()> {
    use md5::{Digest, Md5};
    use rusqlite::OptionalExtension;
    let mut hasher = Md5::new();
    for item in items {
        hasher.update(item.id.to_le_bytes());
        for text in [&item.name, &item.body] {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
    }
    let digest = format!("{:x}", hasher.finalize());
    let key = format!("fts_digest:{user_id}:{kind}");
    let stored: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
            r.get(0)
        })
        .optional()?;
    let source_key = source_key(user_id, kind);
    if stored.as_deref() == Some(digest.as_str()) {
        let set_source = match source {
            Some(source) => conn.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [&source_key, source],
            ),
            None => Ok(0),
        };
        return set_source.map(|_| ());
    }
    let tx = conn.transaction()?;
    let lo = fts_rowid(user_id, kind, 0);
    let hi = fts_rowid(user_id + 1, kind, 0) - 1;
    for table in ["recall_fts", "recall_grams"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE rowid BETWEEN ?1 AND ?2 AND (rowid & 1) = ?3"),
            rusqlite::params![lo, hi, lo & 1],
        )?;
    }
    for item in items {
        insert_fts_row(&tx, user_id, kind, item.id, &item.name, &item.body)?;
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [&key, &digest],
    )?;
    match source {
        Some(source) => tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [&source_key, source],
        )?,
        // Rows replaced without a stamp: a stamp kept from before no longer describes them.
        None => tx.execute("DELETE FROM meta WHERE key = ?1", [&source_key])?,
    };
    tx.commit()
}
