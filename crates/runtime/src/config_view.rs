//! `elroy config`'s values as shown: each key's value (secrets masked, the chat model actually
//! used and why, the merged MCP servers with their tokens masked) and its source.

use elroy_config::{Config, ConfigValue, DatabaseLocation};

/// One key of the resolved configuration as `elroy config` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownValue {
    /// The key.
    pub key: String,
    /// Its value as text (a secret masked).
    pub value: String,
    /// Where it came from (default, file, environment, flag), or why the value is what it is.
    pub source: String,
}

/// `****` plus the last four characters of a set secret (all of it hidden when short).
fn mask(value: &ConfigValue) -> String {
    match value {
        ConfigValue::Str(s) if s.chars().count() > 12 => {
            let tail: String = s
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("****{tail}")
        }
        ConfigValue::Str(_) => "****".into(),
        other => other.display(),
    }
}

/// The database's location as text (`:memory:` for an in-memory database).
pub fn database(config: &Config) -> String {
    match &config.paths.database {
        DatabaseLocation::File(p) => p.display().to_string(),
        DatabaseLocation::Memory => ":memory:".into(),
    }
}

/// Every key in table order, as shown: `chat_model` is the model that will be used (chosen from
/// the provider keys of the process's environment when unset) with the reason as its source;
/// `mcp_servers` are the merged servers (`mcp_config_path`'s too), tokens in env and headers
/// masked, with their files as the source.
pub fn shown_values(config: &Config) -> Vec<ShownValue> {
    config
        .resolved()
        .iter()
        .map(|r| {
            let mut value = if r.def.secret {
                mask(&r.value)
            } else {
                r.value.display()
            };
            let mut source = r.source.to_string();
            if r.def.name == "chat_model" {
                match elroy_llm::select::chat_model_choice(config, &elroy_llm::select::process_env)
                {
                    Some((name, why)) if !why.is_empty() => {
                        value = name;
                        source = if r.value.display() == "null" {
                            why
                        } else {
                            format!("{why}, {source}")
                        };
                    }
                    Some(_) => {}
                    None => {
                        value = "none".into();
                        source = "no chat_model and no provider key; see docs/models.md".into();
                    }
                }
            }
            if r.def.name == "mcp_servers" && !config.mcp_servers.is_empty() {
                let servers: serde_json::Map<String, serde_json::Value> = config
                    .mcp_servers
                    .iter()
                    .map(|s| (s.name.clone(), s.masked_json()))
                    .collect();
                value = serde_json::Value::Object(servers).to_string();
                let mut origins: Vec<String> = Vec::new();
                for server in &config.mcp_servers {
                    let origin = server.origin.to_string();
                    if !origins.contains(&origin) {
                        origins.push(origin);
                    }
                }
                source = origins.join(", ");
            }
            ShownValue {
                key: r.def.name.to_owned(),
                value,
                source,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_shows_only_its_last_four_characters() {
        assert_eq!(
            mask(&ConfigValue::Str("sk-abcdefghijklmnop".into())),
            "****mnop"
        );
        assert_eq!(mask(&ConfigValue::Str("short-key".into())), "****");
    }
}
