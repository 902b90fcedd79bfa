//! [`Gate`]: the [`PermissionGate`] the composition root installs on the registry — the policy,
//! the rules a person granted for this session, the front end's [`Approver`], where refusals are
//! shown, where *always allow* saves its rule, and the values redacted from results.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use elroy_core::{
    Approval, ApprovalRequest, Approver, BoxFuture, GateCall, PermissionGate, Refused, ToolContext,
    ToolOrigin,
};

use crate::policy::{CallView, Decision, Policy, Refusal};
use crate::redact::Redactor;
use crate::rule::{ResolvedTarget, Rule};

/// A refused call, as the person sees it: one line naming the rule that would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The tool.
    pub tool: String,
    /// What it reached (a path, a URL), if anything.
    pub target: Option<String>,
    /// Why it was refused.
    pub refusal: Refusal,
    /// The rule that would allow it (`None` when the person declined it themselves).
    pub allow_rule: Option<String>,
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not permitted: {}", self.tool)?;
        if let Some(target) = &self.target {
            write!(f, " {target}")?;
        }
        write!(f, " ({})", short_reason(&self.refusal))?;
        match (&self.allow_rule, &self.refusal) {
            (Some(rule), _) => write!(f, "; to allow it: --allow '{rule}'")?,
            (None, Refusal::DenyRule(deny)) => {
                write!(f, "; to allow it: remove '{deny}' from permissions.deny")?;
            }
            _ => {}
        }
        Ok(())
    }
}

fn short_reason(refusal: &Refusal) -> String {
    match refusal {
        Refusal::Secret { .. } => "a secret".into(),
        Refusal::DenyRule(rule) => format!("deny rule '{rule}'"),
        Refusal::ReadOnlyMode => "permission mode read-only".into(),
        Refusal::NobodyToAsk => "needs approval; nobody can answer here".into(),
        Refusal::DeniedByPerson(_) => "declined".into(),
    }
}

/// Where refusals are shown (the CLI: stderr; the interface: a line in the conversation).
pub type NoticeSink = Arc<dyn Fn(&Notice) + Send + Sync>;
/// Saves an *always allow* rule to the configuration; `Err` is why it could not (the
/// configuration's own error, kept as it is).
pub type RuleSaver =
    Arc<dyn Fn(&str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> + Send + Sync>;

/// The permission check of one process.
pub struct Gate {
    policy: Policy,
    granted: Mutex<Vec<Rule>>,
    approver: RwLock<Option<Arc<dyn Approver>>>,
    notices: RwLock<Option<NoticeSink>>,
    saver: Option<RuleSaver>,
    redactor: Redactor,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("mode", &self.policy.mode())
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// A gate for `policy` with no approver (every call that would ask is refused), no notice
    /// sink and no saver; `redactions` are secret values (API keys) removed from results.
    pub fn new(policy: Policy, redactions: Vec<String>) -> Self {
        Gate {
            policy,
            granted: Mutex::new(Vec::new()),
            approver: RwLock::new(None),
            notices: RwLock::new(None),
            saver: None,
            redactor: Redactor::new(redactions),
        }
    }

    /// The secret values this gate removes from results, to remove them elsewhere the same way
    /// (the runtime's model requests).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Where *always allow* saves its rule.
    pub fn with_saver(mut self, saver: RuleSaver) -> Self {
        self.saver = Some(saver);
        self
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Installs the front end that asks its person (the interface, the line chat); `None`
    /// removes it, so calls that would ask are refused.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        *self
            .approver
            .write()
            .unwrap_or_else(PoisonError::into_inner) = approver;
    }

    /// Installs where refusals are shown.
    pub fn set_notice_sink(&self, sink: Option<NoticeSink>) {
        *self.notices.write().unwrap_or_else(PoisonError::into_inner) = sink;
    }

    /// Rules the person allowed for this session.
    pub fn granted(&self) -> Vec<Rule> {
        self.granted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn grant(&self, rule: &str) {
        match self.policy.parse_rule(rule) {
            Ok(rule) => self
                .granted
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(rule),
            Err(e) => tracing::warn!(rule, error = %e, "could not grant a rule"),
        }
    }

    fn notify(&self, notice: &Notice) {
        tracing::info!(%notice, "tool call refused");
        let sink = self
            .notices
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(sink) = sink {
            sink(notice);
        }
    }

    fn approver(&self) -> Option<Arc<dyn Approver>> {
        self.approver
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    async fn ask(&self, view: &CallView, call: &GateCall<'_>) -> Result<(), Refusal> {
        let Some(approver) = self.approver() else {
            return Err(Refusal::NobodyToAsk);
        };
        let request = approval_request(view, call);
        match approver.approve(&request).await {
            Approval::Once => Ok(()),
            Approval::Session => {
                self.grant(&request.rule);
                Ok(())
            }
            Approval::Always => {
                self.grant(&request.rule);
                if let Some(saver) = &self.saver
                    && let Err(e) = saver(&request.rule)
                {
                    tracing::warn!(rule = %request.rule, error = %e, "could not save a rule");
                }
                Ok(())
            }
            Approval::Deny { reason } => Err(Refusal::DeniedByPerson(reason)),
        }
    }

    async fn check_call(&self, ctx: &ToolContext, call: GateCall<'_>) -> Result<(), Refused> {
        let mut roots = self.policy.roots().clone();
        roots.cwd.clone_from(&ctx.cwd);
        let view = CallView::of(&call, &roots);
        let granted = self.granted();
        let refusal = match self.policy.decide(ctx.caller, &view, &granted) {
            Decision::Allow => return Ok(()),
            Decision::Ask => match self.ask(&view, &call).await {
                Ok(()) => return Ok(()),
                Err(refusal) => refusal,
            },
            Decision::Refuse(refusal) => refusal,
        };
        let rule = view.narrowest_rule();
        // An allow rule never overrides a deny rule: that refusal names no rule to add.
        let allow_rule = match &refusal {
            Refusal::DeniedByPerson(_) | Refusal::DenyRule(_) => None,
            _ => Some(rule.clone()),
        };
        // A person's own call reads the refusal as its error; a model's or a client's refusal is
        // also shown to the person.
        let shown = !matches!(refusal, Refusal::DeniedByPerson(_));
        if shown && ctx.caller != elroy_core::Caller::Person {
            self.notify(&Notice {
                tool: view.tool.clone(),
                target: target_text(&view.target),
                refusal: refusal.clone(),
                allow_rule,
            });
        }
        Err(Refused(model_message(&view, &refusal, &rule)))
    }
}

fn target_text(target: &ResolvedTarget) -> Option<String> {
    match target {
        ResolvedTarget::None => None,
        ResolvedTarget::Path(p) => Some(p.display().to_string()),
        ResolvedTarget::Url { url, .. } => Some(url.clone()),
    }
}

/// What a person is asked about a call: the tool, its effect, and what matters in full.
pub fn approval_request(view: &CallView, call: &GateCall<'_>) -> ApprovalRequest {
    let mut details = Vec::new();
    match &view.target {
        ResolvedTarget::None => {}
        ResolvedTarget::Path(p) => details.push(("path".to_owned(), p.display().to_string())),
        ResolvedTarget::Url { url, host } => {
            details.push(("url".to_owned(), url.clone()));
            if let Some(host) = host {
                details.push(("host".to_owned(), host.clone()));
            }
        }
    }
    match call.origin {
        ToolOrigin::Builtin => {}
        ToolOrigin::Plugin { path } => {
            details.push(("plugin".to_owned(), path.display().to_string()));
        }
        ToolOrigin::Mcp { server, tool } => {
            details.push(("MCP server".to_owned(), server.clone()));
            details.push(("server's tool".to_owned(), tool.clone()));
        }
    }
    details.push((
        "arguments".to_owned(),
        serde_json::Value::Object(call.arguments.clone()).to_string(),
    ));
    ApprovalRequest {
        tool: view.tool.clone(),
        class: view.effect.class,
        details,
        rule: view.narrowest_rule(),
    }
}

/// The tool error the model reads for a refused call.
pub fn model_message(view: &CallView, refusal: &Refusal, rule: &str) -> String {
    let how = format!(
        "A person can allow it with --allow '{rule}' or by adding '{rule}' to permissions.allow in elroy.conf.yaml (docs/security.md)."
    );
    match refusal {
        Refusal::Secret { path, kind } => format!(
            "not permitted: {} is on elroy's secrets list: {}. Only an allow rule naming that exact path lets it through. {how}",
            path.display(),
            kind.describe()
        ),
        Refusal::DenyRule(deny) => {
            format!("not permitted: the rule '{deny}' in permissions.deny refuses this call.")
        }
        Refusal::ReadOnlyMode => format!(
            "not permitted: the permission mode is read-only, which refuses calls that write, reach the network or run a program ({} is {}). {how}",
            view.tool, view.effect.class
        ),
        Refusal::NobodyToAsk => format!(
            "not permitted: {} ({}) needs a person's approval and nobody can answer here. {how}",
            view.tool, view.effect.class
        ),
        Refusal::DeniedByPerson(None) => "not permitted: the person declined this call.".into(),
        Refusal::DeniedByPerson(Some(reason)) => {
            format!("not permitted: the person declined this call: {reason}")
        }
    }
}

impl PermissionGate for Gate {
    fn check<'a>(
        &'a self,
        ctx: &'a ToolContext,
        call: GateCall<'a>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(self.check_call(ctx, call))
    }

    fn redact(&self, content: &mut String) {
        self.redactor.redact(content);
    }
}
