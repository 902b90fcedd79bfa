//! Which plugins are trusted (`elroy plugins`, `elroy doctor`), the one-line summary of those a
//! command did not run, and matching a path a person typed to a plugin.

use std::path::{Path, PathBuf};

use elroy_config::Config;

use crate::discover::{discover, is_plugin};
use crate::load::configured_entries;
use crate::trust::{
    Fingerprint, TrustEntry, TrustError, TrustList, TrustState, TrustStore, absolute,
};

/// One plugin elroy finds, with its trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginStatus {
    /// The plugin as elroy finds it.
    pub path: PathBuf,
    /// Its trust now.
    pub state: TrustState,
    /// What it resolves to and its hash now (none when it cannot be read).
    pub fingerprint: Option<Fingerprint>,
}

/// Why a trusted entry matches no plugin elroy finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// The file is gone.
    Missing,
    /// The file exists but is not in `contrib/` or a configured plugin path (it was trusted
    /// before its directory was configured, or the configuration changed).
    NotLoaded,
}

/// What [`trust_report`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustReport {
    /// Every plugin found, in load order.
    pub plugins: Vec<PluginStatus>,
    /// Trusted entries that match no plugin found, in list order.
    pub stale: Vec<(TrustEntry, Stale)>,
    /// Configured plugin paths that do not exist (`plugin {path}: path does not exist`).
    pub warnings: Vec<String>,
    /// The trust list could not be read: every plugin counts as untrusted.
    pub list_error: Option<String>,
}

impl TrustReport {
    /// The plugins that are not run.
    pub fn untrusted(&self) -> impl Iterator<Item = &PluginStatus> {
        self.plugins.iter().filter(|p| !p.state.is_trusted())
    }
}

/// The trust of every plugin of the home contrib directory and the configured paths. Runs no
/// plugin; reads and hashes each.
pub fn trust_report(contrib_dir: &Path, entries: &[PathBuf], store: &TrustStore) -> TrustReport {
    let found = discover(contrib_dir, entries);
    let (list, list_error) = match store.load() {
        Ok(list) => (list, None),
        Err(e) => (TrustList::default(), Some(e.to_string())),
    };
    let plugins: Vec<PluginStatus> = found
        .plugins
        .iter()
        .map(|path| {
            let (state, fingerprint) = list.assess_with(path);
            PluginStatus {
                path: path.clone(),
                state,
                fingerprint,
            }
        })
        .collect();
    let loaded: Vec<PathBuf> = found.plugins.iter().map(|p| absolute(p)).collect();
    let stale = list
        .entries()
        .iter()
        .filter(|e| !loaded.contains(&e.path))
        .map(|e| {
            let kind = if e.path.exists() {
                Stale::NotLoaded
            } else {
                Stale::Missing
            };
            (e.clone(), kind)
        })
        .collect();
    TrustReport {
        plugins,
        stale,
        warnings: found.warnings,
        list_error,
    }
}

/// [`trust_report`] for the home and plugin paths of `config`.
pub fn config_trust_report(config: &Config) -> TrustReport {
    trust_report(
        &config.paths.contrib_dir(),
        &configured_entries(config),
        &TrustStore::new(&config.paths.elroy_home),
    )
}

/// The plugin a person means by `given` (as typed, relative to the working directory): the
/// plugin elroy finds at that path or at the same file (after symlinks), so the trust entry is
/// keyed as the loader looks it up; else `given` itself when it is a plugin-like file elroy does
/// not load yet. The flag says whether elroy loads it.
///
/// # Errors
/// [`TrustError::NotAPlugin`] when `given` does not exist, is not a regular executable file, or
/// its name starts with `.` or `_`.
pub fn resolve_plugin_path(given: &Path, found: &[PathBuf]) -> Result<(PathBuf, bool), TrustError> {
    let key = absolute(given);
    let not_a_plugin = |reason: &str| TrustError::NotAPlugin {
        path: given.to_path_buf(),
        reason: reason.to_owned(),
    };
    if !key.exists() {
        return Err(not_a_plugin("no such file"));
    }
    if let Some(plugin) = found.iter().find(|p| absolute(p) == key) {
        return Ok((plugin.clone(), true));
    }
    // The same file reached another way (a symlinked home, `..`): only when the plugin found
    // is not itself a symlink, so trusting the link's target never trusts the link.
    let canonical = std::fs::canonicalize(&key).ok();
    if let Some(plugin) = found.iter().find(|p| {
        std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink())
            && std::fs::canonicalize(p).ok() == canonical
    }) {
        return Ok((plugin.clone(), true));
    }
    if !is_plugin(&key) {
        return Err(not_a_plugin(
            "not a plugin (an executable regular file whose name does not start with . or _)",
        ));
    }
    Ok((key, false))
}

/// The one warning line a command gives for the plugins it did not run because they are not
/// trusted (none when every plugin ran): at most three names, then a count.
pub fn untrusted_summary(untrusted: &[(PathBuf, TrustState)]) -> Option<String> {
    if untrusted.is_empty() {
        return None;
    }
    let shown: Vec<String> = untrusted
        .iter()
        .take(3)
        .map(|(path, state)| {
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let why = match state {
                TrustState::New => "new",
                TrustState::Changed(_) => "changed",
                TrustState::Unreadable(_) => "unreadable",
                TrustState::Trusted => "trusted",
            };
            format!("{name} ({why})")
        })
        .collect();
    let more = match untrusted.len().saturating_sub(3) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let count = untrusted.len();
    Some(format!(
        "{count} plugin{} not run because not trusted: {}{more}; `elroy plugins` lists them, \
         `elroy plugins trust PATH` trusts one after you have read it",
        if count == 1 { "" } else { "s" },
        shown.join(", ")
    ))
}
