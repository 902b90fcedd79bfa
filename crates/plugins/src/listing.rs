//! What `elroy plugins` shows and trusts, decided here so the command line only prints: the rows
//! of the list (state word, path, detail), the list as JSON, and the plugins a `trust` names.

use std::path::{Path, PathBuf};

use crate::status::{PluginStatus, Stale, TrustReport, resolve_plugin_path};
use crate::trust::{TrustEntry, TrustError, TrustState, TrustStore};

/// One row of `elroy plugins`: a plugin elroy finds or a stale trusted entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRow {
    /// `trusted`, `untrusted`, `missing` or `not loaded`.
    pub state: &'static str,
    /// The plugin's path as elroy finds it (or as it was trusted).
    pub path: PathBuf,
    /// Why it is untrusted or stale (none for a trusted plugin).
    pub detail: Option<String>,
}

/// The plugins `elroy plugins trust` is to trust, each with whether elroy loads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustChoice {
    /// The plugins to trust, in the order named (or listed, with `--all`).
    pub plugins: Vec<(PathBuf, bool)>,
    /// With `--all`: untrusted plugins left out because they cannot be read, with the reason.
    pub unreadable: Vec<(PathBuf, String)>,
}

impl TrustState {
    /// The state's key in `elroy plugins --json`: `trusted`, `new`, `changed`, `unreadable`.
    pub fn key(&self) -> &'static str {
        match self {
            TrustState::Trusted => "trusted",
            TrustState::New => "new",
            TrustState::Changed(_) => "changed",
            TrustState::Unreadable(_) => "unreadable",
        }
    }
}

impl Stale {
    /// The state word and the detail `elroy plugins` shows for a stale entry.
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            Stale::Missing => ("missing", "trusted, no longer there"),
            Stale::NotLoaded => (
                "not loaded",
                "trusted; not in contrib/ or a configured plugin path",
            ),
        }
    }
}

impl TrustReport {
    /// One row per plugin found (load order), then one per stale entry (list order).
    pub fn rows(&self) -> Vec<ListRow> {
        let plugins = self.plugins.iter().map(|p| match &p.state {
            TrustState::Trusted => ListRow {
                state: "trusted",
                path: p.path.clone(),
                detail: None,
            },
            other => ListRow {
                state: "untrusted",
                path: p.path.clone(),
                detail: Some(other.describe()),
            },
        });
        let stale = self.stale.iter().map(|(entry, kind)| ListRow {
            state: kind.words().0,
            path: entry.path.clone(),
            detail: Some(kind.words().1.to_owned()),
        });
        plugins.chain(stale).collect()
    }

    /// `elroy plugins --json`: the trust file, each plugin (path, state, detail, target,
    /// sha256) and each stale entry (path, state, target, sha256, trusted_at).
    pub fn to_json(&self, store: &TrustStore) -> serde_json::Value {
        let plugin = |p: &PluginStatus| {
            serde_json::json!({
                "path": p.path,
                "state": p.state.key(),
                "detail": p.state.describe(),
                "target": p.fingerprint.as_ref().map(|f| &f.target),
                "sha256": p.fingerprint.as_ref().map(|f| &f.sha256),
            })
        };
        let stale = |(entry, kind): &(TrustEntry, Stale)| {
            serde_json::json!({
                "path": entry.path,
                "state": kind.words().0,
                "target": entry.target,
                "sha256": entry.sha256,
                "trusted_at": entry.trusted_at,
            })
        };
        serde_json::json!({
            "trust_file": store.file(),
            "plugins": self.plugins.iter().map(plugin).collect::<Vec<_>>(),
            "stale": self.stale.iter().map(stale).collect::<Vec<_>>(),
        })
    }

    /// The plugins `elroy plugins trust` means: each of `paths` matched to the plugin elroy
    /// loads ([`resolve_plugin_path`]), or with `all` every untrusted plugin that can be read.
    ///
    /// # Errors
    /// [`TrustError::NotAPlugin`] for the first of `paths` that is not a plugin (nothing is
    /// to be trusted then).
    pub fn choose(&self, paths: &[PathBuf], all: bool) -> Result<TrustChoice, TrustError> {
        let mut choice = TrustChoice::default();
        if all {
            for p in self.untrusted() {
                if let TrustState::Unreadable(e) = &p.state {
                    choice.unreadable.push((p.path.clone(), e.clone()));
                } else {
                    choice.plugins.push((p.path.clone(), true));
                }
            }
            return Ok(choice);
        }
        let found: Vec<PathBuf> = self.plugins.iter().map(|p| p.path.clone()).collect();
        for given in paths {
            choice
                .plugins
                .push(resolve_plugin_path(Path::new(given), &found)?);
        }
        Ok(choice)
    }
}
