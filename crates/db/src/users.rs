//! Users and user preferences (`docs/formats.md#users-and-preferences`): one `users` row per token,
//! created on first use; one `user_preferences` row per user, created lazily with every name NULL.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use crate::{Db, DbError, format_db_time};

/// A user's profile (`docs/formats.md#users-and-preferences`). `None` means not stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserPreferences {
    /// What the user wants to be called (`get_user_preferred_name`).
    pub preferred_name: Option<String>,
    /// The user's full name (`get_user_full_name`).
    pub full_name: Option<String>,
    /// A custom persona for the system prompt.
    pub system_persona: Option<String>,
    /// The assistant's name (default `Elroy` where shown).
    pub assistant_name: Option<String>,
}

/// One column of `user_preferences`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreferenceField {
    /// `preferred_name`.
    PreferredName,
    /// `full_name`.
    FullName,
    /// `system_persona`.
    SystemPersona,
    /// `assistant_name`.
    AssistantName,
}

impl PreferenceField {
    fn column(self) -> &'static str {
        match self {
            PreferenceField::PreferredName => "preferred_name",
            PreferenceField::FullName => "full_name",
            PreferenceField::SystemPersona => "system_persona",
            PreferenceField::AssistantName => "assistant_name",
        }
    }
}

impl Db {
    /// The id of the user with `token`, creating the row (`created_at` = `now`) on first use.
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn ensure_user(&self, token: &str, now: Timestamp) -> Result<i64, DbError> {
        self.with_conn(|c| {
            // A known user is only read (a read-only or full home still opens).
            let known = c
                .query_row("SELECT id FROM users WHERE token = ?1", [token], |r| {
                    r.get(0)
                })
                .optional()?;
            if let Some(id) = known {
                return Ok(id);
            }
            c.execute(
                "INSERT INTO users (token, created_at) VALUES (?1, ?2) ON CONFLICT(token) DO NOTHING",
                params![token, format_db_time(now)],
            )?;
            c.query_row("SELECT id FROM users WHERE token = ?1", [token], |r| {
                r.get(0)
            })
        })
    }

    /// The user's preferences; all `None` when no row exists yet.
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn preferences(&self, user_id: i64) -> Result<UserPreferences, DbError> {
        self.with_conn(|c| {
            c.query_row(
                "SELECT preferred_name, full_name, system_persona, assistant_name
                 FROM user_preferences WHERE user_id = ?1",
                [user_id],
                |r| {
                    Ok(UserPreferences {
                        preferred_name: r.get(0)?,
                        full_name: r.get(1)?,
                        system_persona: r.get(2)?,
                        assistant_name: r.get(3)?,
                    })
                },
            )
            .optional()
            .map(Option::unwrap_or_default)
        })
    }

    /// Stores one preference (`None` clears it), creating the row if needed. Name fields are
    /// stored in Unicode NFC.
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn set_preference(
        &self,
        user_id: i64,
        field: PreferenceField,
        value: Option<&str>,
        now: Timestamp,
    ) -> Result<(), DbError> {
        let col = field.column();
        // Names (preferred, full, assistant) are stored in NFC, as every store keeps names; the
        // persona is free text and stays as written.
        let normalized: Option<String> = match field {
            PreferenceField::SystemPersona => None,
            _ => value.map(|v| unicode_normalization::UnicodeNormalization::nfc(v).collect()),
        };
        let value = normalized.as_deref().or(value);
        self.with_conn(|c| {
            c.execute(
                &format!(
                    "INSERT INTO user_preferences (user_id, {col}, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(user_id) DO UPDATE SET {col} = excluded.{col},
                     updated_at = excluded.updated_at"
                ),
                params![user_id, value, format_db_time(now)],
            )
            .map(|_| ())
        })
    }
}
