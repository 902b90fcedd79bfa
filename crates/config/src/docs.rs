//! `docs/configuration.md`, generated from the key table so it cannot fall behind.

use crate::keys::{KEYS, KeyType};

/// Where the configuration reference lives, relative to the workspace root.
pub const CONFIGURATION_DOC_PATH: &str = "docs/configuration.md";

fn type_name(ty: KeyType) -> String {
    match ty {
        KeyType::Bool => "bool".into(),
        KeyType::Int { min: 0 } => "int".into(),
        KeyType::Int { min } => format!("int (≥ {min})"),
        KeyType::Float => "float".into(),
        KeyType::Str => "string".into(),
        KeyType::List => "list".into(),
        KeyType::PathList => "path list".into(),
        KeyType::Map => "mapping".into(),
    }
}

/// The text of `docs/configuration.md`: every key with its type, default, environment variable
/// and effect, plus how the sources combine.
pub fn configuration_markdown() -> String {
    let mut out = String::from(
        "# Configuration

This file is generated from elroy's key declarations (`declare_keys!` in `crates/config/src/keys.rs`) by
`cargo xtask docs`; do not edit it by hand. The same declarations give the typed `Settings` the code reads
(`config.settings.max_tokens`), `elroy config` and the validation messages.

## Sources

From lowest to highest precedence:

1. built-in defaults (below);
2. the YAML file: `--config FILE`, else `ELROY_CONFIG_PATH`, else `$ELROY_HOME/elroy.conf.yaml` (a missing
   implicit file is ignored; a file named with `--config` must exist);
3. environment variables (the column below);
4. command-line flags: `--user` (`user_token`), `--model` (`chat_model`), `--mcp-config FILE`
   (`mcp_config_path`).

Null and empty values never override a lower layer. Every value is parsed into its type when elroy starts; a
bad value stops it with a message naming the key, the value and where it came from, for example
`invalid value for max_tokens (environment variable ELROY_MAX_TOKENS): expected an integer, got \"abc\"`.
Booleans accept `true/false/yes/no/on/off/1/0` (any case); lists accept a YAML list, or from the environment a
JSON array or a comma-separated string (path lists: `:`-separated). `elroy config` prints every resolved value
and its source, with keys masked. A few of Elroy's keys are not implemented by elroy (marked below): they are
accepted at their default, and setting one to anything else stops elroy with
`<key> is not implemented by elroy: remove it (<source> sets it to <value>)`.

Read directly, not configuration keys: `ELROY_HOME` (the home, default `~/.elroy`; `--home`),
`ELROY_CONFIG_PATH`, `ELROY_LOG_LEVEL` (log filter, default `info`; `-v` means `debug`), `ELROY_NOW` (an RFC 3339
instant that fixes the clock), `ELROY_RESTART_RESUME_MESSAGE`, and `TZ` (the zone when `timezone` is unset).

MCP servers (`mcp_servers`, and the `mcpServers` of the JSON file `mcp_config_path` names, whose servers replace
those of the same name): each entry is Claude Desktop's — `command`, `args`, `env` (merged over the inherited
environment), `cwd` for a server elroy starts (stdio), or `url` and `headers` for a streamable HTTP server;
Claude Code's `type` (`stdio`, `http`) is read and other fields are ignored. `${VAR}` and `${VAR:-default}` in
these values are taken from the environment; a server whose variable is unset is reported as failed, the others
start. `elroy config` shows the merged servers with the values of `env` and `headers` masked. README's \"Use
other MCP servers\" has examples and the tool naming rule.

## Keys

| key | type | default | environment | effect | from |
|---|---|---|---|---|---|
",
    );
    for key in KEYS {
        let default = key.default.map_or_else(
            || "null".to_owned(),
            |d| format!("`{}`", d.trim_matches('\'')),
        );
        let mut effect = key.doc.to_owned();
        if !key.implemented {
            effect.push_str(
                "; not implemented by elroy: setting it to anything but its default is an error",
            );
        }
        if key.deprecated {
            effect.push_str(" (deprecated in the file)");
        }
        if key.secret {
            effect.push_str("; masked by `elroy config`");
        }
        out.push_str(&format!(
            "| `{}` | {} | {} | `{}` | {} | {} |\n",
            key.name,
            type_name(key.ty),
            default,
            key.env,
            effect,
            key.spec
        ));
    }
    out
}
