//! The MCP servers elroy is a client of: `mcp_servers` in `elroy.conf.yaml`, merged
//! with the `mcpServers` of the JSON file `mcp_config_path` (`--mcp-config FILE`), in the shape
//! of Claude Desktop's `claude_desktop_config.json` and Claude Code's `.mcp.json`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::paths::resolve_path;
use crate::{ConfigError, Source};

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Its name: the key in `mcp_servers` / `mcpServers` (the `<server>` of `mcp__<server>__<tool>`).
    pub name: String,
    /// How elroy reaches it.
    pub transport: McpTransport,
    /// Where the entry came from (the YAML file, the environment, the JSON file).
    pub origin: Source,
    /// Why the server cannot start although its entry parsed: a `${VAR}` that is not set, a
    /// transport elroy does not speak (`"type": "sse"`). Reported as the server's failure; the
    /// other servers start.
    pub problem: Option<String>,
}

/// How elroy reaches an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin and stdout (Claude Desktop's `command` entries).
    Stdio {
        /// The program (looked up in `PATH` when it has no `/`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set over the inherited environment (not replacing it: `npx` needs `PATH`).
        env: BTreeMap<String, String>,
        /// Its working directory (relative paths against elroy's), else elroy's.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint (Claude Code's `"type": "http"`).
    Http {
        /// The endpoint URL, e.g. `https://mcp.example.com/mcp`.
        url: String,
        /// Headers sent with every request (`Authorization: Bearer …`).
        headers: BTreeMap<String, String>,
    },
}

impl McpServer {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self.transport {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
        }
    }

    /// The entry as JSON in Claude Desktop's shape with the values of `env` and `headers`
    /// replaced by `****` (what `elroy config` shows: they carry tokens).
    pub fn masked_json(&self) -> Value {
        let masked = |map: &BTreeMap<String, String>| -> Value {
            Value::Object(
                map.keys()
                    .map(|k| (k.clone(), Value::String("****".into())))
                    .collect(),
            )
        };
        let mut out = Map::new();
        match &self.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                out.insert("command".into(), Value::String(command.clone()));
                out.insert(
                    "args".into(),
                    Value::Array(args.iter().cloned().map(Value::String).collect()),
                );
                if !env.is_empty() {
                    out.insert("env".into(), masked(env));
                }
                if let Some(cwd) = cwd {
                    out.insert("cwd".into(), Value::String(cwd.display().to_string()));
                }
            }
            McpTransport::Http { url, headers } => {
                out.insert("url".into(), Value::String(url.clone()));
                if !headers.is_empty() {
                    out.insert("headers".into(), masked(headers));
                }
            }
        }
        Value::Object(out)
    }
}

fn invalid(name: &str, origin: &Source, expected: &str, got: &Value) -> ConfigError {
    ConfigError::InvalidValue {
        key: format!("mcp_servers.{name}"),
        origin: origin.clone(),
        expected: expected.to_owned(),
        got: got.to_string(),
    }
}

/// A `${VAR}` without a default whose variable is unset or empty (the server's problem).
#[derive(Debug, thiserror::Error)]
#[error("the environment variable {0} is not set")]
struct UnsetVariable(String);

/// Expands `${VAR}` and `${VAR:-default}` in `text` from `env`.
///
/// # Errors
/// [`UnsetVariable`]: the first variable that is unset (or empty) and has no default.
fn expand(text: &str, env: &HashMap<String, String>) -> Result<String, UnsetVariable> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (env.get(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(UnsetVariable(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads a string-to-string mapping (`env`, `headers`); numbers and booleans are taken as text.
fn string_map(
    name: &str,
    origin: &Source,
    field: &str,
    value: Option<&Value>,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let Value::Object(map) = value else {
        return Err(invalid(
            name,
            origin,
            &format!("\"{field}\" as a mapping of names to strings"),
            value,
        ));
    };
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
            other => Err(invalid(
                name,
                origin,
                &format!("\"{field}\" values as strings"),
                other,
            )),
        })
        .collect()
}

/// Parses one entry. `env` expands `${VAR}`; a relative `cwd` is taken against `base` (elroy's
/// working directory), `~` against `user_dir`.
pub(crate) fn parse_server(
    name: &str,
    entry: &Value,
    origin: &Source,
    env: &HashMap<String, String>,
    base: &Path,
    user_dir: Option<&Path>,
) -> Result<McpServer, ConfigError> {
    let Value::Object(obj) = entry else {
        return Err(invalid(
            name,
            origin,
            "a mapping with \"command\" (stdio) or \"url\" (streamable HTTP)",
            entry,
        ));
    };
    let text = |field: &str| -> Result<Option<String>, ConfigError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(invalid(
                name,
                origin,
                &format!("\"{field}\" as a string"),
                other,
            )),
        }
    };
    let kind = text("type")?;
    let command = text("command")?;
    let url = text("url")?;
    let mut problem = None;
    let mut unset = |unset: UnsetVariable| {
        problem.get_or_insert(unset.to_string());
        String::new()
    };
    let mut expand_or_note = |value: &str| expand(value, env).unwrap_or_else(&mut unset);
    let transport = match (command, url) {
        (Some(command), None) => {
            let args = match obj.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(_) | Value::Bool(_) => Ok(item.to_string()),
                        other => Err(invalid(name, origin, "\"args\" as strings", other)),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(other) => {
                    return Err(invalid(
                        name,
                        origin,
                        "\"args\" as a list of strings",
                        other,
                    ));
                }
            };
            let vars = string_map(name, origin, "env", obj.get("env"))?;
            let cwd = text("cwd")?;
            McpTransport::Stdio {
                command: expand_or_note(&command),
                args: args.iter().map(|a| expand_or_note(a)).collect(),
                env: vars
                    .into_iter()
                    .map(|(k, v)| {
                        let v = expand_or_note(&v);
                        (k, v)
                    })
                    .collect(),
                cwd: cwd.map(|c| resolve_path(&expand_or_note(&c), base, user_dir)),
            }
        }
        (None, Some(url)) => {
            let headers = string_map(name, origin, "headers", obj.get("headers"))?;
            McpTransport::Http {
                url: expand_or_note(&url),
                headers: headers
                    .into_iter()
                    .map(|(k, v)| {
                        let v = expand_or_note(&v);
                        (k, v)
                    })
                    .collect(),
            }
        }
        (Some(_), Some(_)) => {
            return Err(invalid(
                name,
                origin,
                "either \"command\" (stdio) or \"url\" (streamable HTTP), not both",
                entry,
            ));
        }
        (None, None) => {
            return Err(invalid(
                name,
                origin,
                "\"command\" (stdio) or \"url\" (streamable HTTP)",
                entry,
            ));
        }
    };
    if let Some(kind) = kind {
        let fits = match (&transport, kind.to_ascii_lowercase().as_str()) {
            (McpTransport::Stdio { .. }, "stdio") => true,
            (McpTransport::Http { .. }, "http" | "streamable-http" | "streamable_http") => true,
            (McpTransport::Http { .. }, "sse") => {
                problem.get_or_insert(
                    "the legacy SSE transport (\"type\": \"sse\") is not supported by elroy; use the server's streamable HTTP endpoint (\"type\": \"http\")".into(),
                );
                true
            }
            _ => false,
        };
        if !fits {
            return Err(invalid(
                name,
                origin,
                "\"type\" \"stdio\" with \"command\", or \"http\" with \"url\"",
                &Value::String(kind),
            ));
        }
    }
    Ok(McpServer {
        name: name.to_owned(),
        transport,
        origin: origin.clone(),
        problem,
    })
}

/// Reads the JSON file of `mcp_config_path`: `{"mcpServers": {NAME: entry, …}}`.
///
/// # Errors
/// [`ConfigError::Unreadable`] / [`ConfigError::Unparsable`] naming the file.
pub(crate) fn read_json_file(path: &Path) -> Result<Map<String, Value>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| ConfigError::Unparsable {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    match value.get("mcpServers") {
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(Value::Null) | None => Err(ConfigError::Unparsable {
            path: path.to_owned(),
            message: "expected a JSON object with an \"mcpServers\" object, as Claude Desktop and Claude Code write it".into(),
        }),
        Some(_) => Err(ConfigError::Unparsable {
            path: path.to_owned(),
            message: "\"mcpServers\" must be an object of server names to entries".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn env() -> HashMap<String, String> {
        [("TOKEN".to_owned(), "s3cret".to_owned())].into()
    }

    #[test]
    fn variables_expand_with_defaults() {
        assert_eq!(expand("Bearer ${TOKEN}", &env()).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${NOPE:-x}/${TOKEN}", &env()).unwrap(), "x/s3cret");
        assert_eq!(expand("${NOPE}", &env()).unwrap_err().0, "NOPE");
        assert_eq!(expand("no ${ end", &env()).unwrap(), "no ${ end");
    }

    /// Claude Code's entries carry `type`; unknown fields are ignored; an unset variable is the
    /// server's problem, not a configuration error.
    #[test]
    fn entries_of_both_shapes() {
        let origin = Source::Default;
        let cwd = Path::new("/work");
        let stdio = parse_server(
            "fs",
            &json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg", 3], "env": {"A": "${TOKEN}"}, "cwd": "sub", "alwaysAllow": []}),
            &origin,
            &env(),
            cwd,
            None,
        )
        .unwrap();
        assert_eq!(
            stdio.transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "pkg".into(), "3".into()],
                env: [("A".to_owned(), "s3cret".to_owned())].into(),
                cwd: Some("/work/sub".into()),
            }
        );
        assert_eq!(stdio.masked_json()["env"]["A"], "****");
        let http = parse_server(
            "remote",
            &json!({"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${MISSING}"}}),
            &origin,
            &env(),
            cwd,
            None,
        )
        .unwrap();
        assert_eq!(
            http.problem.as_deref(),
            Some("the environment variable MISSING is not set")
        );
        let err = parse_server("bad", &json!({"args": []}), &origin, &env(), cwd, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("mcp_servers.bad"), "{err}");
    }
}
