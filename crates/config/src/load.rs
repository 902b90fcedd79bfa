//! Layering the sources into a [`Config`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::keys::{IGNORED_KEYS, KEYS, KeyDef, Settings, key_def};
use crate::paths::{DatabaseLocation, HomePaths, resolve_path, user_home_for, valid_user_token};
use crate::value::{self, ConfigValue, is_empty_yaml};
use crate::{Config, ConfigError, Resolved, Source, resolve_timezone};

/// Everything the loader reads, injectable so tests never see the real environment or home.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--home DIR` (else `ELROY_HOME`, else `~/.elroy`).
    pub home: Option<PathBuf>,
    /// `--config FILE` (else `ELROY_CONFIG_PATH`, else `$ELROY_HOME/elroy.conf.yaml`). Unlike the
    /// implicit locations, a file named here must exist.
    pub config_file: Option<PathBuf>,
    /// Command-line overrides: `(key, value as text, flag as typed)`, e.g.
    /// `("user_token", "alice", "--user")`.
    pub flags: Vec<(String, String, String)>,
    /// The environment (`std::env::vars()` in the binary).
    pub env: HashMap<String, String>,
    /// The working directory relative paths resolve against.
    pub cwd: PathBuf,
    /// The user's home directory (`$HOME`), for `~` and the default `~/.elroy`.
    pub user_dir: Option<PathBuf>,
}

impl LoadOptions {
    /// Adds a command-line override: `key` set to `value`, its source named `source` (the flag
    /// as typed, e.g. `--user`).
    pub fn flag(&mut self, key: &str, value: &str, source: &str) {
        self.flags
            .push((key.to_owned(), value.to_owned(), source.to_owned()));
    }

    /// These options for the user `token` (as `--user TOKEN` would give), the token's source
    /// named `source` (`elroy serve`: `serve.keys`); an earlier user token is replaced.
    pub fn for_user(&self, token: &str, source: &str) -> LoadOptions {
        let mut options = self.clone();
        options.flags.retain(|(key, _, _)| key != "user_token");
        options.flag("user_token", token, source);
        options
    }

    /// Options from the process: its environment, working directory and `$HOME`.
    pub fn from_process() -> Self {
        LoadOptions {
            env: std::env::vars().collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            user_dir: std::env::home_dir(),
            ..Default::default()
        }
    }

    fn env(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

fn invalid(def: &KeyDef, source: &Source, m: value::Mismatch) -> ConfigError {
    ConfigError::InvalidValue {
        key: def.name.into(),
        origin: source.clone(),
        expected: m.expected,
        got: m.got,
    }
}

pub(crate) fn load(opts: &LoadOptions) -> Result<Config, ConfigError> {
    let user_dir = opts.user_dir.as_deref();
    let elroy_home = match (&opts.home, opts.env("ELROY_HOME")) {
        (Some(h), _) => resolve_path(&h.to_string_lossy(), &opts.cwd, user_dir),
        (None, Some(h)) => resolve_path(h, &opts.cwd, user_dir),
        (None, None) => user_dir.ok_or(ConfigError::NoHome)?.join(".elroy"),
    };

    // Layer 1: defaults.
    let mut values: Vec<Resolved> = KEYS
        .iter()
        .map(|def| Resolved {
            def,
            value: value::default_value(def.ty, def.default),
            source: Source::Default,
        })
        .collect();
    let defaults: Vec<ConfigValue> = values.iter().map(|e| e.value.clone()).collect();
    let mut warnings = Vec::new();

    // Layer 2: the YAML file.
    let (config_file, explicit) = match (&opts.config_file, opts.env("ELROY_CONFIG_PATH")) {
        (Some(p), _) => (
            resolve_path(&p.to_string_lossy(), &opts.cwd, user_dir),
            true,
        ),
        (None, Some(p)) => (resolve_path(p, &opts.cwd, user_dir), false),
        (None, None) => (elroy_home.join("elroy.conf.yaml"), false),
    };
    let file_read = read_file_layer(&config_file, explicit, &mut values, &mut warnings)?;

    // Layer 3: environment.
    for entry in &mut values {
        if let Some(raw) = opts.env(entry.def.env) {
            let source = Source::Env(entry.def.env.to_owned());
            entry.value =
                value::from_str(entry.def.ty, raw).map_err(|m| invalid(entry.def, &source, m))?;
            entry.source = source;
        }
    }

    // Layer 4: flags.
    for (key, raw, flag) in &opts.flags {
        if raw.trim().is_empty() {
            continue;
        }
        let Some(entry) = values.iter_mut().find(|e| e.def.name == key) else {
            continue;
        };
        let source = Source::Flag(flag.clone());
        entry.value =
            value::from_str(entry.def.ty, raw).map_err(|m| invalid(entry.def, &source, m))?;
        entry.source = source;
    }

    // Keys elroy does not implement: only their defaults are accepted.
    for (entry, default) in values.iter().zip(&defaults) {
        if !entry.def.implemented && entry.source != Source::Default && entry.value != *default {
            return Err(ConfigError::NotImplemented {
                key: entry.def.name.into(),
                origin: entry.source.clone(),
                got: entry.value.display(),
            });
        }
    }

    let settings = Settings::from_resolved(&values)?;
    let source_of = |name: &str| {
        values
            .iter()
            .find(|e| e.def.name == name)
            .map_or(Source::Default, |e| e.source.clone())
    };

    let token = settings.user_token.clone();
    if !valid_user_token(&token) {
        return Err(ConfigError::InvalidUserToken(token));
    }
    if !["full", "plain"]
        .iter()
        .any(|v| settings.ui.trim().eq_ignore_ascii_case(v))
    {
        return Err(ConfigError::InvalidValue {
            key: "ui".into(),
            origin: source_of("ui"),
            expected: "full or plain".into(),
            got: Value::String(settings.ui.clone()).to_string(),
        });
    }
    let (timezone, timezone_name) =
        match resolve_timezone(settings.timezone.as_deref(), opts.env("TZ")) {
            Ok(tz) => tz,
            Err(crate::UnknownTimezone { name, .. }) => {
                return Err(ConfigError::InvalidValue {
                    key: "timezone".into(),
                    origin: source_of("timezone"),
                    expected: "a known time zone (an IANA name such as Asia/Kolkata, UTC or local)"
                        .into(),
                    got: Value::String(name).to_string(),
                });
            }
        };
    let database = match &settings.database_url {
        None => DatabaseLocation::File(elroy_home.join("state.db")),
        Some(url) => parse_database_url(url, &opts.cwd)?,
    };
    let user_home = user_home_for(&elroy_home, &token);
    let memory_dir = match &settings.memory_dir {
        Some(dir) => resolve_path(dir, &opts.cwd, user_dir),
        None => user_home.join("memories"),
    };
    let embedding_model_dir = match &settings.embedding_model_path {
        Some(p) => resolve_path(p, &opts.cwd, user_dir),
        None => elroy_home.join("models").join("all-MiniLM-L6-v2"),
    };
    let elroy_db_path = match &settings.elroy_db_path {
        Some(p) => resolve_path(p, &opts.cwd, user_dir),
        None => elroy_home.join("elroy.db"),
    };
    let now =
        match opts.env("ELROY_NOW") {
            None => None,
            Some(raw) => Some(raw.trim().parse::<jiff::Timestamp>().map_err(|e| {
                ConfigError::InvalidNow {
                    value: raw.to_owned(),
                    message: e.to_string(),
                }
            })?),
        };

    let mcp_servers = mcp_servers(&settings, source_of("mcp_servers"), opts, user_dir)?;
    let permissions =
        crate::permissions::permissions(&settings, &source_of("permissions"), opts, &elroy_home)?;

    Ok(Config {
        values,
        mcp_servers,
        permissions,
        settings,
        paths: HomePaths {
            elroy_home,
            user_home,
            database,
            memory_dir,
            elroy_db_path,
            embedding_model_dir,
        },
        config_file: file_read.then_some(config_file),
        timezone,
        timezone_name,
        now,
        warnings,
    })
}

/// The typed MCP servers: `mcp_servers`, then the `mcpServers` of `mcp_config_path`, whose
/// entries replace those of the same name; sorted by name.
fn mcp_servers(
    settings: &Settings,
    key_source: Source,
    opts: &LoadOptions,
    user_dir: Option<&Path>,
) -> Result<Vec<crate::McpServer>, ConfigError> {
    let mut servers = std::collections::BTreeMap::new();
    for (name, entry) in &settings.mcp_servers {
        let server =
            crate::mcp::parse_server(name, entry, &key_source, &opts.env, &opts.cwd, user_dir)?;
        servers.insert(name.clone(), server);
    }
    if let Some(path) = &settings.mcp_config_path {
        let path = resolve_path(path, &opts.cwd, user_dir);
        let source = Source::File(path.clone());
        for (name, entry) in crate::mcp::read_json_file(&path)? {
            let server =
                crate::mcp::parse_server(&name, &entry, &source, &opts.env, &opts.cwd, user_dir)?;
            servers.insert(name, server);
        }
    }
    Ok(servers.into_values().collect())
}

/// Applies the YAML file; returns whether a file was read.
fn read_file_layer(
    path: &Path,
    explicit: bool,
    values: &mut [Resolved],
    warnings: &mut Vec<String>,
) -> Result<bool, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(false),
        Err(e) => {
            return Err(ConfigError::Unreadable {
                path: path.to_owned(),
                message: e.to_string(),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(true);
    }
    // A key given twice: the last value wins, as Elroy (PyYAML) reads its config file, and as
    // elroy reads front matter (elroy-markdown).
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    let parsed: Value = serde_saphyr::from_str_with_options(&text, options).map_err(|e| {
        ConfigError::Unparsable {
            path: path.to_owned(),
            message: one_line(&e.to_string()),
        }
    })?;
    let map = match parsed {
        Value::Object(map) => map,
        Value::Null => return Ok(true),
        _ => {
            return Err(ConfigError::Unparsable {
                path: path.to_owned(),
                message: "the file must be a mapping of keys to values".into(),
            });
        }
    };
    let source = Source::File(path.to_owned());
    for (key, raw) in map {
        if IGNORED_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "config key '{key}' in {} is no longer used (ignored)",
                path.display()
            ));
            continue;
        }
        let Some(def) = key_def(&key) else {
            warnings.push(format!(
                "unknown config key '{key}' in {} (ignored)",
                path.display()
            ));
            continue;
        };
        if def.deprecated {
            warnings.push(format!(
                "config key '{key}' in {} is deprecated",
                path.display()
            ));
        }
        if is_empty_yaml(&raw) {
            continue;
        }
        let value = value::from_yaml(def.ty, &raw).map_err(|m| invalid(def, &source, m))?;
        if let Some(entry) = values.iter_mut().find(|e| e.def.name == def.name) {
            entry.value = value;
            entry.source = source.clone();
        }
    }
    Ok(true)
}

/// The first line of a parser message (serde-saphyr adds a source snippet below it), without a
/// leading `error: `: start-up errors are one line.
fn one_line(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default().trim();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

fn parse_database_url(url: &str, cwd: &Path) -> Result<DatabaseLocation, ConfigError> {
    if url == "sqlite::memory:" {
        return Ok(DatabaseLocation::Memory);
    }
    if let Some(path) = url.strip_prefix("sqlite:///") {
        return Ok(DatabaseLocation::File(if path.starts_with('/') {
            PathBuf::from(path)
        } else {
            cwd.join(path)
        }));
    }
    if url.contains("://") || url.starts_with("sqlite:") {
        return Err(ConfigError::UnsupportedDatabaseUrl(url.to_owned()));
    }
    let p = PathBuf::from(url);
    Ok(DatabaseLocation::File(if p.is_absolute() {
        p
    } else {
        cwd.join(p)
    }))
}
