//! The permission check of one process (`docs/security.md`): the configured policy as an
//! `elroy_permissions::Gate` on the registry, refusals shown through the runtime's warning sink,
//! *always allow* saved to `elroy.conf.yaml`, and the values no result may carry (API keys).

use std::path::PathBuf;
use std::sync::Arc;

use elroy_config::{Config, ConfigValue, McpTransport};
use elroy_permissions::{Gate, Policy, PolicyError, Roots, RuleSaver};

use crate::WarningSink;

/// Environment variables whose values are secrets wherever they appear: provider keys and other
/// credentials by their conventional names.
fn is_secret_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.split(['_', '-']).any(|word| {
        matches!(
            word,
            "KEY" | "TOKEN" | "SECRET" | "PASSWORD" | "PASSWD" | "PAT" | "CREDENTIALS" | "AUTH"
        )
    }) || upper.ends_with("APIKEY")
}

/// A header that carries credentials, by its name (`Authorization`, `X-Api-Key`, `Cookie`, …).
fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["auth", "token", "key", "secret", "cookie", "password"]
        .iter()
        .any(|word| lower.contains(word))
}

/// The secret values of this process: configured keys `elroy config` masks, credentials in the
/// environment, and the credentials among MCP servers' `env` and `headers` (by their names).
pub(crate) fn secret_values(config: &Config) -> Vec<String> {
    let mut values: Vec<String> = config
        .resolved()
        .iter()
        .filter(|r| r.def.secret)
        .filter_map(|r| match &r.value {
            ConfigValue::Str(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    values.extend(
        std::env::vars()
            .filter(|(name, _)| is_secret_variable(name))
            .map(|(_, value)| value),
    );
    for server in &config.mcp_servers {
        match &server.transport {
            McpTransport::Stdio { env, .. } => values.extend(
                env.iter()
                    .filter(|(name, _)| is_secret_variable(name))
                    .map(|(_, value)| value.clone()),
            ),
            McpTransport::Http { headers, .. } => {
                for (_, value) in headers.iter().filter(|(name, _)| is_secret_header(name)) {
                    values.push(value.clone());
                    // `Bearer TOKEN`: the token alone too.
                    values.extend(value.split_once(' ').map(|(_, token)| token.to_owned()));
                }
            }
        }
    }
    values
}

/// elroy's configuration files, which no model's call reads: the home's `elroy.conf.yaml` and the
/// file that was read.
fn config_files(config: &Config) -> Vec<PathBuf> {
    let mut files = vec![config.paths.elroy_home.join("elroy.conf.yaml")];
    files.extend(config.config_file.clone());
    files
}

/// The gate for `config`; refusals go to `warn` (the CLI: stderr) until a front end installs
/// its own sink.
///
/// # Errors
/// A rule that cannot be read (the configuration checks every rule when it loads, so only a
/// rule whose meaning changed since — a path that appeared — could fail here).
pub fn build_gate(config: &Config, warn: &WarningSink) -> Result<Arc<Gate>, PolicyError> {
    let roots = Roots {
        cwd: std::env::current_dir().unwrap_or_else(|_| config.paths.elroy_home.clone()),
        user_dir: std::env::home_dir(),
        elroy_home: config.paths.elroy_home.clone(),
    };
    let policy = Policy::new(&config.permissions, roots, config_files(config))?;
    // *Always allow* adds the rule to permissions.allow of the file that was read (else the
    // home's), keeping what the person wrote there; a failure is shown, the grant still holds for
    // this session.
    let file = config.writable_file();
    let warn_save = Arc::clone(warn);
    let saver: RuleSaver = Arc::new(move |rule: &str| {
        elroy_config::append_to_nested_list(&file, "permissions", "allow", &rule.into()).map_err(
            |e| {
                warn_save(&format!("could not save '{rule}': {e}"));
                e.into()
            },
        )
    });
    let gate = Gate::new(policy, secret_values(config)).with_saver(saver);
    let warn = Arc::clone(warn);
    gate.set_notice_sink(Some(Arc::new(move |notice| warn(&notice.to_string()))));
    Ok(Arc::new(gate))
}
