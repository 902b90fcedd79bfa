//! The server's settings: the `serve` configuration map, `serve_key` (`ELROY_SERVE_KEY`) and
//! `--bind`, checked once at start.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use elroy_config::Config;

/// The address `elroy serve` binds when neither `--bind` nor `serve.bind` is given.
pub const DEFAULT_BIND: &str = "127.0.0.1:8765";

/// How elroy's own tool calls show in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolActivity {
    /// Not at all: the reply is the model's text only (the default).
    Hidden,
    /// One line per call (`[elroy used create_memory]`) before the text that follows it.
    Summary,
}

/// Why the server cannot start; the CLI prints the text.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// No bearer key is configured.
    #[error(
        "elroy serve needs an API key, even on loopback: set ELROY_SERVE_KEY (for the configured user), \
         or serve.keys: {{KEY: USER_TOKEN}} in elroy.conf.yaml. Make one with: \
         openssl rand -hex 32   (or: head -c 32 /dev/urandom | base64)"
    )]
    NoKey,
    /// A value of the `serve` map is not what it should be.
    #[error("serve.{key}: {message}")]
    Invalid {
        /// The key inside `serve` (`keys`, `bind`, …).
        key: String,
        /// What is wrong, with the value.
        message: String,
    },
}

/// The resolved settings of one server.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// Where to listen.
    pub bind: SocketAddr,
    /// Whether the address was asked for (`--bind` or `serve.bind`) rather than the default.
    pub bind_asked: bool,
    /// Bearer key → user token.
    pub keys: HashMap<String, String>,
    /// Tool calls in replies.
    pub tool_activity: ToolActivity,
    /// Interval of the SSE keep-alive comments while a turn runs.
    pub keep_alive: Duration,
}

impl ServeSettings {
    /// The settings from `config` (its `serve` map and `serve_key`), with `bind` (`--bind`) over
    /// `serve.bind`.
    ///
    /// # Errors
    /// [`SettingsError::NoKey`] when no key is configured; [`SettingsError::Invalid`] for a
    /// value of the wrong shape (a key mapped to something other than a valid user token, an
    /// address that does not parse, an unknown `tool_activity`).
    pub fn from_config(config: &Config, bind: Option<&str>) -> Result<Self, SettingsError> {
        let map = &config.settings.serve;
        let invalid = |key: &str, message: String| SettingsError::Invalid {
            key: key.into(),
            message,
        };
        let mut keys = HashMap::new();
        match map.get("keys") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Object(entries)) => {
                for (key, token) in entries {
                    let Some(token) = token.as_str() else {
                        return Err(invalid(
                            "keys",
                            format!("the user token of a key must be a string, not {token}"),
                        ));
                    };
                    if !elroy_config::valid_user_token(token) {
                        return Err(invalid(
                            "keys",
                            format!(
                                "'{token}' is not a user token (1-128 letters, digits, '.', '_' or '-')"
                            ),
                        ));
                    }
                    if key.trim().len() < 8 {
                        return Err(invalid(
                            "keys",
                            "a key must have at least 8 characters".to_owned(),
                        ));
                    }
                    keys.insert(key.trim().to_owned(), token.to_owned());
                }
            }
            Some(other) => {
                return Err(invalid(
                    "keys",
                    format!("expected a mapping KEY: USER_TOKEN, got {other}"),
                ));
            }
        }
        if let Some(key) = &config.settings.serve_key {
            keys.insert(key.trim().to_owned(), config.settings.user_token.clone());
        }
        if keys.is_empty() {
            return Err(SettingsError::NoKey);
        }
        let configured_bind = map.get("bind").and_then(serde_json::Value::as_str);
        let bind_text = bind.or(configured_bind);
        let bind = bind_text
            .unwrap_or(DEFAULT_BIND)
            .parse::<SocketAddr>()
            .map_err(|e| {
                invalid(
                    "bind",
                    format!(
                        "'{}' is not an address as IP:PORT (e.g. 127.0.0.1:8765): {e}",
                        bind_text.unwrap_or(DEFAULT_BIND)
                    ),
                )
            })?;
        let tool_activity = match map.get("tool_activity").and_then(serde_json::Value::as_str) {
            None | Some("hidden") => ToolActivity::Hidden,
            Some("summary") => ToolActivity::Summary,
            Some(other) => {
                return Err(invalid(
                    "tool_activity",
                    format!("expected hidden or summary, got '{other}'"),
                ));
            }
        };
        let keep_alive = match map.get("keep_alive_seconds") {
            None | Some(serde_json::Value::Null) => 10,
            Some(value) => value.as_u64().filter(|s| *s >= 1).ok_or_else(|| {
                invalid(
                    "keep_alive_seconds",
                    format!("expected a whole number of seconds >= 1, got {value}"),
                )
            })?,
        };
        Ok(ServeSettings {
            bind,
            bind_asked: bind_text.is_some(),
            keys,
            tool_activity,
            keep_alive: Duration::from_secs(keep_alive),
        })
    }

    /// The user token of `key`, comparing every configured key in full (no early exit on the
    /// first differing byte, so the time taken says nothing about a key).
    pub fn user_of(&self, key: &str) -> Option<&str> {
        let mut found = None;
        for (known, token) in &self.keys {
            if constant_time_eq(known.as_bytes(), key.as_bytes()) {
                found = Some(token.as_str());
            }
        }
        found
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(yaml: &str, env: &[(&str, &str)]) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".elroy");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("elroy.conf.yaml"), yaml).unwrap();
        let options = elroy_config::LoadOptions {
            home: Some(home),
            cwd: dir.path().to_path_buf(),
            user_dir: Some(dir.path().to_path_buf()),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..elroy_config::LoadOptions::default()
        };
        Config::load(&options).unwrap()
    }

    #[test]
    fn keys_come_from_the_map_and_the_environment() {
        let c = config(
            "serve:\n  keys:\n    key-of-alice-123: alice\n    key-of-bob-4567: bob\n",
            &[("ELROY_SERVE_KEY", "default-key-99")],
        );
        let s = ServeSettings::from_config(&c, None).unwrap();
        assert_eq!(s.user_of("key-of-alice-123"), Some("alice"));
        assert_eq!(s.user_of("key-of-bob-4567"), Some("bob"));
        assert_eq!(s.user_of("default-key-99"), Some("DEFAULT"));
        assert_eq!(s.user_of("key-of-alice-12"), None);
        assert_eq!(s.user_of(""), None);
        assert_eq!(s.bind.to_string(), DEFAULT_BIND);
        assert!(!s.bind_asked);
        assert_eq!(s.tool_activity, ToolActivity::Hidden);
    }

    #[test]
    fn no_key_is_an_error_that_says_how_to_make_one() {
        let e = ServeSettings::from_config(&config("", &[]), None).unwrap_err();
        assert!(e.to_string().contains("openssl rand"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let bad_token = config("serve:\n  keys:\n    abcdefgh12: ../x\n", &[]);
        let e = ServeSettings::from_config(&bad_token, None).unwrap_err();
        assert!(e.to_string().starts_with("serve.keys:"), "{e}");
        let c = config("serve:\n  keys:\n    abcdefgh12: alice\n", &[]);
        let e = ServeSettings::from_config(&c, Some("localhost")).unwrap_err();
        assert!(e.to_string().starts_with("serve.bind:"), "{e}");
        let s = ServeSettings::from_config(&c, Some("0.0.0.0:9000")).unwrap();
        assert!(s.bind_asked);
        let activity = config(
            "serve:\n  keys:\n    abcdefgh12: alice\n  tool_activity: loud\n",
            &[],
        );
        let e = ServeSettings::from_config(&activity, None).unwrap_err();
        assert!(e.to_string().starts_with("serve.tool_activity:"), "{e}");
    }
}
