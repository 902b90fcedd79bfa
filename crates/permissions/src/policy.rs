//! The decision for one call (`docs/security.md#modes`): secrets first, then deny, ask and allow
//! rules, then the permission mode.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use elroy_core::{CallTarget, Caller, Changes, EffectClass, GateCall, ToolEffect};
use serde_json::Value;

use crate::path::{Roots, is_within, resolve};
use crate::rule::{ResolvedTarget, Rule, RuleError};
use crate::secrets::{SecretKind, Secrets};

/// The permission mode (`permissions.mode`, `ELROY_PERMISSION_MODE`, `--permission-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// `home` runs; `read` runs inside the working directory and the elroy home and asks
    /// elsewhere; `network` and `execute` ask.
    #[default]
    Ask,
    /// Reads of the home and `read` as in `ask`; whatever writes, reaches the network or runs a
    /// program is refused.
    ReadOnly,
    /// Everything runs but deny rules and secrets.
    Auto,
}

impl Mode {
    /// The mode's name as configured.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::ReadOnly => "read-only",
            Mode::Auto => "auto",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not `ask`, `read-only` or `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a permission mode: use ask, read-only or auto")]
pub struct ModeError(pub String);

impl FromStr for Mode {
    type Err = ModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "ask" | "default" => Ok(Mode::Ask),
            "read-only" | "readonly" => Ok(Mode::ReadOnly),
            "auto" => Ok(Mode::Auto),
            _ => Err(ModeError(s.to_owned())),
        }
    }
}

/// The configured mode and rules, as text (what `elroy.conf.yaml`, the environment and flags
/// say); [`Policy::new`] reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSettings {
    /// The mode.
    pub mode: Mode,
    /// `permissions.allow` and `--allow`.
    pub allow: Vec<String>,
    /// `permissions.ask`.
    pub ask: Vec<String>,
    /// `permissions.deny` and `--deny`.
    pub deny: Vec<String>,
}

/// Why a call did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The path is on the secrets list.
    Secret {
        /// The resolved path.
        path: PathBuf,
        /// Why it is a secret.
        kind: SecretKind,
    },
    /// A deny rule matched.
    DenyRule(String),
    /// The mode is `read-only` and the call writes, reaches the network or runs a program.
    ReadOnlyMode,
    /// The call needs a person's yes and nobody can answer here.
    NobodyToAsk,
    /// The person said no.
    DeniedByPerson(Option<String>),
}

/// What the check decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask a person first.
    Ask,
    /// Do not run it.
    Refuse(Refusal),
}

/// One call as the policy sees it: the tool, its effect and its resolved target.
#[derive(Debug, Clone)]
pub struct CallView {
    /// The tool's name.
    pub tool: String,
    /// Its declared effect.
    pub effect: ToolEffect,
    /// What it reaches, resolved.
    pub target: ResolvedTarget,
}

impl CallView {
    /// The view of a gate call: the target argument resolved against `roots`.
    pub fn of(call: &GateCall<'_>, roots: &Roots) -> Self {
        let effect = call.spec.effect;
        let arg = |param: &str| call.arguments.get(param).and_then(Value::as_str);
        // Arguments are judged as the tools read them: trimmed (`create_contrib_repo`,
        // `fetch_page`), and a URL without a scheme as `https://` (`fetch_page`).
        let target = match effect.target {
            CallTarget::None => ResolvedTarget::None,
            CallTarget::Path(param) => {
                let raw = arg(param).map(str::trim).filter(|p| !p.is_empty());
                ResolvedTarget::Path(resolve(raw.unwrap_or("."), roots))
            }
            CallTarget::Url(param) => {
                let url = arg(param).unwrap_or_default().trim().to_owned();
                let full = if url.contains("://") {
                    url.clone()
                } else {
                    format!("https://{url}")
                };
                let host = url::Url::parse(&full)
                    .ok()
                    .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned()))
                    .map(|h| h.trim_end_matches('.').to_ascii_lowercase());
                ResolvedTarget::Url { url, host }
            }
        };
        CallView {
            tool: call.spec.name.clone(),
            effect,
            target,
        }
    }

    /// The narrowest rule that allows this call.
    pub fn narrowest_rule(&self) -> String {
        self.target.narrowest_rule(&self.tool)
    }
}

/// The mode and rules of one process, read and checked.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: Mode,
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    secrets: Secrets,
    roots: Roots,
}

/// A rule of the configuration that could not be read, with the list it is in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permissions.{list}: {error}")]
pub struct PolicyError {
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    /// What is wrong with the rule.
    pub error: RuleError,
}

fn parse_all(
    list: &'static str,
    rules: &[String],
    roots: &Roots,
) -> Result<Vec<Rule>, PolicyError> {
    rules
        .iter()
        .map(|r| Rule::parse(r, roots).map_err(|error| PolicyError { list, error }))
        .collect()
}

impl Policy {
    /// Reads `settings`; `configs` are elroy's configuration files (secrets).
    ///
    /// # Errors
    /// The first rule that cannot be read.
    pub fn new(
        settings: &PermissionSettings,
        roots: Roots,
        configs: Vec<PathBuf>,
    ) -> Result<Self, PolicyError> {
        Ok(Policy {
            mode: settings.mode,
            allow: parse_all("allow", &settings.allow, &roots)?,
            ask: parse_all("ask", &settings.ask, &roots)?,
            deny: parse_all("deny", &settings.deny, &roots)?,
            secrets: Secrets::new(roots.user_dir.as_deref(), configs),
            roots,
        })
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The directories paths resolve against.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Reads `text` as a rule against this policy's roots.
    ///
    /// # Errors
    /// What is wrong with the rule.
    pub fn parse_rule(&self, text: &str) -> Result<Rule, RuleError> {
        Rule::parse(text, &self.roots)
    }

    /// Decides a call by `caller`; `granted` are rules the person allowed for this session.
    pub fn decide(&self, caller: Caller, call: &CallView, granted: &[Rule]) -> Decision {
        let allowed_by = |rules: &[Rule]| rules.iter().any(|r| r.matches(&call.tool, &call.target));
        if let ResolvedTarget::Path(path) = &call.target
            && let Some(kind) = self.secrets.classify(path)
        {
            let named = self
                .allow
                .iter()
                .chain(granted)
                .any(|r| r.names_exact_path(&call.tool, path));
            return if named {
                Decision::Allow
            } else {
                Decision::Refuse(Refusal::Secret {
                    path: path.clone(),
                    kind,
                })
            };
        }
        if caller == Caller::Person {
            return Decision::Allow;
        }
        if let Some(rule) = self
            .deny
            .iter()
            .find(|r| r.matches(&call.tool, &call.target))
        {
            return Decision::Refuse(Refusal::DenyRule(rule.to_string()));
        }
        if allowed_by(&self.ask) {
            return self.asked(caller);
        }
        if allowed_by(&self.allow) || allowed_by(granted) {
            return Decision::Allow;
        }
        match self.by_mode(call) {
            Decision::Ask => self.asked(caller),
            other => other,
        }
    }

    fn asked(&self, caller: Caller) -> Decision {
        match caller {
            // The client asks its own person (`docs/security.md#mcp`).
            Caller::Client => Decision::Allow,
            _ => Decision::Ask,
        }
    }

    fn inside_roots(&self, target: &ResolvedTarget) -> bool {
        match target {
            // A `read` tool whose target elroy cannot see (an MCP server's read-only tool) may
            // read anywhere.
            ResolvedTarget::None => false,
            ResolvedTarget::Path(path) => {
                let home = crate::path::resolve_existing(&self.roots.elroy_home);
                let cwd = crate::path::resolve_existing(&self.roots.cwd);
                is_within(path, &cwd) || is_within(path, &home)
            }
            ResolvedTarget::Url { .. } => false,
        }
    }

    fn by_mode(&self, call: &CallView) -> Decision {
        let class = call.effect.class;
        if self.mode == Mode::Auto {
            return Decision::Allow;
        }
        let writes = call.effect.changes != Changes::Nothing;
        match class {
            EffectClass::Home if self.mode == Mode::ReadOnly && writes => {
                Decision::Refuse(Refusal::ReadOnlyMode)
            }
            EffectClass::Home => Decision::Allow,
            EffectClass::Read if self.mode == Mode::ReadOnly && writes => {
                Decision::Refuse(Refusal::ReadOnlyMode)
            }
            EffectClass::Read if self.inside_roots(&call.target) => Decision::Allow,
            EffectClass::Read => Decision::Ask,
            EffectClass::Network | EffectClass::Execute if self.mode == Mode::ReadOnly => {
                Decision::Refuse(Refusal::ReadOnlyMode)
            }
            EffectClass::Network | EffectClass::Execute => Decision::Ask,
        }
    }

    /// Whether `elroy mcp` (or `elroy serve`'s `/mcp`) lists a tool to a client: not when a
    /// deny rule names the tool without a specifier, nor in `read-only` mode when it writes,
    /// reaches the network or runs a program (unless an allow rule names it).
    pub fn listed_for_client(&self, tool: &str, effect: &ToolEffect) -> bool {
        let whole = |rules: &[Rule]| {
            rules
                .iter()
                .any(|r| r.names_tool(tool) && matches!(r.specifier(), crate::rule::Specifier::Any))
        };
        if whole(&self.deny) {
            return false;
        }
        if self.mode == Mode::ReadOnly && !whole(&self.allow) {
            let writes = effect.changes != Changes::Nothing;
            return match effect.class {
                EffectClass::Home | EffectClass::Read => !writes,
                EffectClass::Network | EffectClass::Execute => false,
            };
        }
        true
    }
}
