//! `elroy config`: the resolved configuration, secrets masked, with the source of each value.

use std::process::ExitCode;

use crate::output;

use elroy_config::Config;
use serde_json::json;

/// `elroy config …`
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(config: &Config, args: &ConfigArgs) -> Result<ExitCode, String> {
    let paths = &config.paths;
    let database = elroy_runtime::config_view::database(config);
    let rows = elroy_runtime::config_view::shown_values(config);
    if args.json {
        let values: serde_json::Map<String, serde_json::Value> = rows
            .iter()
            .map(|r| (r.key.clone(), json!({"value": r.value, "source": r.source})))
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
    let key_width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|r| r.value.chars().count().min(40))
        .max()
        .unwrap_or(0);
    for r in &rows {
        text.push_str(&format!(
            "{:key_width$} = {:value_width$}  ({})\n",
            r.key, r.value, r.source
        ));
    }
    output::print(&text)?;
    for warning in &config.warnings {
        output::eprintln(&format!("warning: {warning}"));
    }
    Ok(ExitCode::SUCCESS)
}
