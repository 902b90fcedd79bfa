//! # elroy-config
//!
//! elroy's configuration (`docs/configuration.md`, decision K7) and home layout
//! (`docs/formats.md#home-layout`). Sources, lowest to highest: built-in defaults < the YAML file
//! (`--config`, else `ELROY_CONFIG_PATH`, else `$ELROY_HOME/elroy.conf.yaml`) < `ELROY_*`
//! environment variables < command-line flags. Null and empty values never override a lower layer.
//! Every value is parsed into its declared type at load time; a bad value is an error naming the
//! key, the value and where it came from (Elroy crashes on `ELROY_MAX_TOKENS=5000` and treats
//! `ELROY_SHOW_INTERNAL_THOUGHT=false` as true).
//!
//! ## Reading a key
//!
//! Every key is declared once (`keys.rs`): name, type, default, environment variable,
//! documentation, the spec section it comes from, and flags. Code reads the typed
//! [`Settings`] of a loaded [`Config`]; a key is a field, so a misspelt key does not compile.
//!
//! ```
//! use elroy_config::{Config, LoadOptions};
//!
//! let options = LoadOptions {
//!     home: Some("/nonexistent/elroy-doc-home".into()),
//!     env: [("ELROY_MAX_TOKENS".to_owned(), "5000".to_owned())].into(),
//!     ..LoadOptions::default()
//! };
//! let config = Config::load(&options)?;
//! assert_eq!(config.settings.max_tokens, 5000);
//! assert!(config.settings.versioned_home);
//! assert_eq!(config.settings.chat_model, None);
//! # Ok::<(), elroy_config::ConfigError>(())
//! ```
//!
//! A misspelt key is a compile error (no field `max_token`):
//!
//! ```compile_fail,E0609
//! fn budget(config: &elroy_config::Config) -> u64 {
//!     config.settings.max_token
//! }
//! ```
//!
//! and there is no lookup by name to fall back on:
//!
//! ```compile_fail,E0599
//! fn budget(config: &elroy_config::Config) -> i64 {
//!     config.int("max_tokens")
//! }
//! ```

mod docs;
mod edit;
mod edit_nested;
mod keys;
mod load;
mod mcp;
mod paths;
mod permissions;
mod sync_remote;
mod timezone;
mod value;

use std::path::PathBuf;

pub use docs::{CONFIGURATION_DOC_PATH, configuration_markdown};
pub use edit::{EditError, append_to_list, set_key};
pub use edit_nested::append_to_nested_list;
pub use keys::{IGNORED_KEYS, KEYS, KeyDef, KeyType, Settings};
pub use load::LoadOptions;
pub use mcp::{McpServer, McpTransport};
pub use paths::{
    DatabaseLocation, HomePaths, expand_tilde, is_device_name, resolve_path, user_home_for,
    valid_user_token,
};
pub use permissions::{ALLOW_FLAG_KEY, DENY_FLAG_KEY, MODE_FLAG_KEY};
pub use sync_remote::RemoteSaved;
pub use timezone::{UnknownTimezone, resolve_timezone};
pub use value::ConfigValue;

/// Where a configuration value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// The YAML configuration file at this path.
    File(PathBuf),
    /// This environment variable.
    Env(String),
    /// This command-line flag.
    Flag(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Env(v) => write!(f, "environment variable {v}"),
            Source::Flag(flag) => write!(f, "command-line flag {flag}"),
        }
    }
}

/// A configuration error: start-up stops with its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value of the wrong type or out of range:
    /// `invalid value for {key} ({source}): expected {expected}, got {got}`.
    #[error("invalid value for {key} ({origin}): expected {expected}, got {got}")]
    InvalidValue {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: Source,
        /// What was expected (`an integer`, `a boolean`, …).
        expected: String,
        /// The value given, as JSON.
        got: String,
    },
    /// The YAML file does not parse.
    #[error("cannot parse config file {path}: {message}")]
    Unparsable {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A config file named with `--config` does not exist or cannot be read.
    #[error("cannot read config file {path}: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// `user_token` is not a valid token (`docs/formats.md#user-tokens`).
    #[error(
        "invalid user_token '{0}': use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
    )]
    InvalidUserToken(String),
    /// `database_url` is not a supported URL (`docs/formats.md#connection-and-migrations`).
    #[error("Unsupported database URL: {0}")]
    UnsupportedDatabaseUrl(String),
    /// `ELROY_NOW` is not an RFC 3339 instant.
    #[error(
        "invalid ELROY_NOW {value:?}: expected an RFC 3339 instant such as 2026-03-16T08:30:00Z ({message})"
    )]
    InvalidNow {
        /// The value.
        value: String,
        /// The parser's message.
        message: String,
    },
    /// A key elroy does not implement was set to something other than its default
    /// (`KeyDef::implemented`).
    #[error("{key} is not implemented by elroy: remove it ({origin} sets it to {got})")]
    NotImplemented {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: Source,
        /// The value given, as `elroy config` shows it.
        got: String,
    },
    /// No home directory could be determined.
    #[error("cannot determine the home directory: set ELROY_HOME or pass --home")]
    NoHome,
}

/// One resolved key: its value and where the value came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The key's definition.
    pub def: &'static KeyDef,
    /// The value (typed).
    pub value: ConfigValue,
    /// Its source.
    pub source: Source,
}

/// The resolved configuration of one process.
#[derive(Debug, Clone)]
pub struct Config {
    values: Vec<Resolved>,
    /// Every key's typed value: `config.settings.max_tokens`.
    pub settings: Settings,
    /// The home layout for the configured user token.
    pub paths: HomePaths,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// The configured time zone (`timezone`, else `TZ`, else the system zone, else UTC).
    pub timezone: jiff::tz::TimeZone,
    /// A short name of the zone for display (`Asia/Kolkata`, `IST-5:30`, `UTC`).
    pub timezone_name: String,
    /// The fixed clock from `ELROY_NOW`, if set.
    pub now: Option<jiff::Timestamp>,
    /// Warnings found while loading (unknown and deprecated keys), to show or log.
    pub warnings: Vec<String>,
    /// The MCP servers elroy is a client of, sorted by name: `mcp_servers` merged with the
    /// `mcpServers` of `mcp_config_path` (whose entries win), `${VAR}` expanded.
    pub mcp_servers: Vec<McpServer>,
    /// The permission mode and rules (`permissions`, `ELROY_PERMISSION_MODE`,
    /// `--permission-mode`, `--allow`, `--deny`), every rule checked (`docs/security.md`).
    pub permissions: elroy_permissions::PermissionSettings,
}

/// The home a command only reads does not exist ([`Config::require_home`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "no elroy home at {shown} (this command only reads a home and never creates one). Check --home, \
     ELROY_HOME and HOME; to start a new home there: mkdir -p {shown} (a command that writes, such \
     as `elroy message`, creates it too)",
    shown = .path.display()
)]
pub struct NoHomeError {
    /// The home directory that is missing.
    pub path: PathBuf,
}

impl Config {
    /// Loads the configuration.
    ///
    /// # Errors
    /// The first [`ConfigError`] found.
    pub fn load(options: &LoadOptions) -> Result<Config, ConfigError> {
        load::load(options)
    }

    /// Checks that the home exists, for a command that only reads one (`elroy remind`, `due`,
    /// `agenda`, `doctor`, `history`): such a command never creates it, so a mistyped
    /// `ELROY_HOME` or a missing `$HOME` (under cron) is an error naming the path, not an empty
    /// home that says "No due items.".
    ///
    /// # Errors
    /// [`NoHomeError`] when the home directory does not exist.
    pub fn require_home(&self) -> Result<(), NoHomeError> {
        let home = &self.paths.elroy_home;
        if home.is_dir() {
            Ok(())
        } else {
            Err(NoHomeError { path: home.clone() })
        }
    }

    /// The configuration file elroy writes a saved choice to: the file that was read, else
    /// `$ELROY_HOME/elroy.conf.yaml` (where the next start looks first).
    pub fn writable_file(&self) -> PathBuf {
        self.config_file
            .clone()
            .unwrap_or_else(|| self.paths.elroy_home.join("elroy.conf.yaml"))
    }

    /// Every key with its value and source, in table order.
    pub fn resolved(&self) -> &[Resolved] {
        &self.values
    }

    /// The resolved entry of `key` (tests check sources with it).
    #[cfg(test)]
    pub(crate) fn entry(&self, key: &str) -> Option<&Resolved> {
        self.values.iter().find(|r| r.def.name == key)
    }
}

#[cfg(test)]
mod tests;

// The integration tests run in the unit-test executable (docs/development.md, "Test layout").
#[cfg(test)]
extern crate self as elroy_config;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
