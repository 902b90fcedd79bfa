//! `elroy config`: the resolved configuration, secrets masked, with the source of each value.

use std::process::ExitCode;

use crate::output;

use elroy_config::{Config, ConfigValue, DatabaseLocation};
use serde_json::json;

/// `elroy config …`
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
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

pub(crate) fn run(config: &Config, args: &ConfigArgs) -> Result<ExitCode, String> {
    let paths = &config.paths;
    let database = match &paths.database {
        DatabaseLocation::File(p) => p.display().to_string(),
        DatabaseLocation::Memory => ":memory:".into(),
    };
    let rows: Vec<(String, String, String)> = config
        .resolved()
        .iter()
        .map(|r| {
            let shown = if r.def.secret {
                mask(&r.value)
            } else {
                r.value.display()
            };
            let mut source = r.source.to_string();
            let mut shown = shown;
            if r.def.name == "chat_model" {
                // The model that will actually be used, and why.
                match elroy_llm::select::chat_model_choice(config, &elroy_llm::select::process_env)
                {
                    Some((name, why)) if !why.is_empty() => {
                        shown = name;
                        source = if r.value.display() == "null" {
                            why
                        } else {
                            format!("{why}, {source}")
                        };
                    }
                    Some(_) => {}
                    None => {
                        shown = "none".into();
                        source = "no chat_model and no provider key; see docs/models.md".into();
                    }
                }
            }
            if r.def.name == "mcp_servers" && !config.mcp_servers.is_empty() {
                // The merged servers (mcp_config_path's too), tokens in env and headers masked.
                let servers: serde_json::Map<String, serde_json::Value> = config
                    .mcp_servers
                    .iter()
                    .map(|s| (s.name.clone(), s.masked_json()))
                    .collect();
                shown = serde_json::Value::Object(servers).to_string();
                let mut origins: Vec<String> = Vec::new();
                for server in &config.mcp_servers {
                    let origin = server.origin.to_string();
                    if !origins.contains(&origin) {
                        origins.push(origin);
                    }
                }
                source = origins.join(", ");
            }
            (r.def.name.to_owned(), shown, source)
        })
        .collect();
    if args.json {
        let values: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|(k, v, s)| (k.clone(), json!({"value": v, "source": s})))
            .collect();
        let out = json!({
            "home": paths.elroy_home,
            "user_home": paths.user_home,
            "config_file": config.config_file,
            "database": database,
            "timezone": config.timezone_name,
            "values": values,
        });
        output::println(&serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "home:        {}\nuser home:   {}\n",
        paths.elroy_home.display(),
        paths.user_home.display()
    );
    match &config.config_file {
        Some(file) => text.push_str(&format!("config file: {}\n", file.display())),
        None => text.push_str("config file: none (defaults, environment and flags only)\n"),
    }
    text.push_str(&format!("database:    {database}\n"));
    text.push_str(&format!("timezone:    {}\n", config.timezone_name));
    if let Some(now) = config.now {
        text.push_str(&format!("clock:       fixed at {now} (ELROY_NOW)\n"));
    }
    text.push('\n');
    let key_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|r| r.1.chars().count().min(40))
        .max()
        .unwrap_or(0);
    for (key, value, source) in &rows {
        text.push_str(&format!(
            "{key:key_width$} = {value:value_width$}  ({source})\n"
        ));
    }
    output::print(&text)?;
    for warning in &config.warnings {
        output::eprintln(&format!("warning: {warning}"));
    }
    Ok(ExitCode::SUCCESS)
}
