//! The `permissions` key (`docs/security.md#rules`): `{mode, allow, ask, deny}` from
//! `elroy.conf.yaml` (or `ELROY_PERMISSIONS` as JSON), the mode from `ELROY_PERMISSION_MODE`
//! and `--permission-mode`, rules added by `--allow` and `--deny`; every rule read once here so a
//! mistyped one stops the command with its key and source.

use std::path::Path;

use elroy_permissions::{Mode, PermissionSettings, Roots, Rule};
use serde_json::Value;

use crate::{ConfigError, LoadOptions, Settings, Source};

/// The flag keys the CLI passes in [`LoadOptions::flags`] (`--permission-mode`, `--allow`,
/// `--deny`; the last two may repeat).
pub const MODE_FLAG_KEY: &str = "permissions.mode";
/// See [`MODE_FLAG_KEY`].
pub const ALLOW_FLAG_KEY: &str = "permissions.allow";
/// See [`MODE_FLAG_KEY`].
pub const DENY_FLAG_KEY: &str = "permissions.deny";

fn invalid(key: &str, origin: &Source, expected: impl Into<String>, got: &Value) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.into(),
        origin: origin.clone(),
        expected: expected.into(),
        got: got.to_string(),
    }
}

fn rules(key: &str, value: &Value, source: &Source) -> Result<Vec<(String, Source)>, ConfigError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(one) => Ok(vec![(one.clone(), source.clone())]),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(rule) => Ok((rule.clone(), source.clone())),
                other => Err(invalid(key, source, "a list of rules (strings)", other)),
            })
            .collect(),
        other => Err(invalid(key, source, "a list of rules (strings)", other)),
    }
}

fn mode(key: &str, raw: &str, source: &Source) -> Result<Mode, ConfigError> {
    raw.parse()
        .map_err(|_| invalid(key, source, "ask, read-only or auto", &Value::from(raw)))
}

/// Reads the permission settings of all layers and checks every rule.
pub(crate) fn permissions(
    settings: &Settings,
    key_source: &Source,
    opts: &LoadOptions,
    elroy_home: &Path,
) -> Result<PermissionSettings, ConfigError> {
    let mut out = PermissionSettings::default();
    let mut lists: [Vec<(String, Source)>; 3] = Default::default();
    for (key, value) in &settings.permissions {
        let full = format!("permissions.{key}");
        match key.as_str() {
            "mode" => match value {
                Value::String(raw) => out.mode = mode(&full, raw, key_source)?,
                Value::Null => {}
                other => return Err(invalid(&full, key_source, "ask, read-only or auto", other)),
            },
            "allow" => lists[0] = rules(&full, value, key_source)?,
            "ask" => lists[1] = rules(&full, value, key_source)?,
            "deny" => lists[2] = rules(&full, value, key_source)?,
            _ => {
                return Err(invalid(
                    &full,
                    key_source,
                    "one of the keys mode, allow, ask, deny",
                    value,
                ));
            }
        }
    }
    if let Some(raw) = opts
        .env
        .get("ELROY_PERMISSION_MODE")
        .filter(|v| !v.trim().is_empty())
    {
        out.mode = mode(
            "permissions.mode",
            raw,
            &Source::Env("ELROY_PERMISSION_MODE".into()),
        )?;
    }
    for (key, raw, flag) in &opts.flags {
        let source = Source::Flag(flag.clone());
        match key.as_str() {
            MODE_FLAG_KEY => out.mode = mode(MODE_FLAG_KEY, raw, &source)?,
            ALLOW_FLAG_KEY => lists[0].push((raw.clone(), source)),
            DENY_FLAG_KEY => lists[2].push((raw.clone(), source)),
            _ => {}
        }
    }
    let roots = Roots {
        cwd: opts.cwd.clone(),
        user_dir: opts.user_dir.clone(),
        elroy_home: elroy_home.to_owned(),
    };
    let [allow, ask, deny] = lists;
    for (name, list, target) in [
        ("allow", allow, &mut out.allow),
        ("ask", ask, &mut out.ask),
        ("deny", deny, &mut out.deny),
    ] {
        for (rule, source) in list {
            if let Err(e) = Rule::parse(&rule, &roots) {
                return Err(invalid(
                    &format!("permissions.{name}"),
                    &source,
                    e.to_string(),
                    &Value::from(rule),
                ));
            }
            target.push(rule);
        }
    }
    Ok(out)
}
