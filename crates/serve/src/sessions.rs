//! Which elroy session a request belongs to.
//!
//! A session is one conversation of one user: its own context window in the transcript (stored
//! under a conversation row of `state.db`'s users, `{token}.serve.{16 hex}`), while memories, the
//! agenda, due items and notes are the user's. A request names its session by the
//! `X-Elroy-Session` header (the same name reaches the same context window after a restart);
//! without one, the session is the one whose known history is the longest prefix of the history
//! the client resent (OpenAI clients resend the whole conversation with every message), among the
//! conversations of the same `user` field. A history nobody knows starts a new session. Known
//! histories live in memory: after a restart a header-less conversation continues in a new
//! session (the memories stay).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// One message of a request as the session lookup sees it: role and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryMessage {
    /// `system`, `user`, `assistant`, …
    pub role: String,
    /// The text (parts joined), trimmed.
    pub text: String,
}

/// A session's identity: its name (logged, and sent back as `X-Elroy-Session`) and the token of
/// its context window's row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId {
    /// The session's name: the header's value, or `c-{uuid}` for one found by its history.
    pub name: String,
    /// `{user token}.serve.{16 hex of the SHA-256 of the name}`.
    pub transcript_token: String,
}

impl SessionId {
    /// The session called `name` for `user_token`.
    pub fn new(user_token: &str, name: &str) -> Self {
        let digest = Sha256::digest(name.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        SessionId {
            name: name.to_owned(),
            transcript_token: format!("{user_token}.serve.{hex}"),
        }
    }
}

/// The known histories of one user's header-less conversations.
#[derive(Debug, Default)]
pub struct Histories {
    known: Mutex<HashMap<[u8; 32], String>>,
}

/// The digest of each prefix of `messages` (index `i`: the first `i + 1` messages), for the
/// conversations of `client_user` (the request's `user` field, empty when absent).
fn prefix_digests(client_user: &str, messages: &[HistoryMessage]) -> Vec<[u8; 32]> {
    let mut hasher = Sha256::new();
    hasher.update(client_user.as_bytes());
    hasher.update([0u8]);
    messages
        .iter()
        .map(|m| {
            hasher.update(m.role.as_bytes());
            hasher.update([0x1f]);
            hasher.update(m.text.as_bytes());
            hasher.update([0x1e]);
            hasher.clone().finalize().into()
        })
        .collect()
}

impl Histories {
    /// The session of a request whose messages before the new one are `earlier`: the name of
    /// the session whose known history is the longest prefix of `earlier`, else `None`.
    pub fn find(&self, client_user: &str, earlier: &[HistoryMessage]) -> Option<String> {
        let digests = prefix_digests(client_user, earlier);
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        digests.iter().rev().find_map(|d| known.get(d).cloned())
    }

    /// Records that session `name`'s history is now `history` (the request's messages and the
    /// reply), so the next request that resends it finds the session.
    pub fn remember(&self, client_user: &str, history: &[HistoryMessage], name: &str) {
        if let Some(last) = prefix_digests(client_user, history).last() {
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            known.insert(*last, name.to_owned());
        }
    }
}

/// Shared per-user state: the histories and the sessions' turn locks.
#[derive(Debug, Default)]
pub struct Sessions {
    /// Header-less conversations' histories.
    pub histories: Histories,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<elroy_orchestrator::Session>>>>>,
}

/// The turn lock of one session; holds its orchestrator session once one was started.
pub type Slot = Arc<tokio::sync::Mutex<Option<elroy_orchestrator::Session>>>;

impl Sessions {
    /// The turn lock of session `name` (created empty the first time).
    pub fn slot(&self, name: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(name.to_owned()).or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: &str, text: &str) -> HistoryMessage {
        HistoryMessage {
            role: role.into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_longest_known_prefix_wins_and_users_are_apart() {
        let h = Histories::default();
        let one = vec![m("user", "hi"), m("assistant", "hello")];
        h.remember("u", &one, "A");
        let mut two = one.clone();
        two.extend([m("user", "more"), m("assistant", "sure")]);
        h.remember("u", &two, "B");
        // A resent history extending `two` is B's, one extending only `one` is A's.
        let mut three = two.clone();
        three.push(m("user", "x"));
        assert_eq!(h.find("u", &three).as_deref(), Some("B"));
        let mut branch = one.clone();
        branch.push(m("user", "other"));
        assert_eq!(h.find("u", &branch).as_deref(), Some("A"));
        // Another client user, or a history nobody knows, finds nothing.
        assert_eq!(h.find("v", &three), None);
        assert_eq!(h.find("u", &[m("user", "hi")]), None);
        assert_eq!(h.find("u", &[]), None);
    }

    #[test]
    fn a_session_name_gives_a_stable_row_per_user() {
        let a = SessionId::new("alice", "work");
        assert_eq!(a, SessionId::new("alice", "work"));
        assert_ne!(
            a.transcript_token,
            SessionId::new("bob", "work").transcript_token
        );
        assert_ne!(
            a.transcript_token,
            SessionId::new("alice", "home").transcript_token
        );
        assert!(a.transcript_token.starts_with("alice.serve."));
        assert_eq!(a.transcript_token.len(), "alice.serve.".len() + 16);
    }
}
