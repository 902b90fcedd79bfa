//! The line chat's approval question (`docs/security.md`): a model's call that needs a person's
//! approval stops the turn, prints the tool, its effect and what it reaches in full, and asks
//! `Allow TOOL? [y/N/s/a]` on the line editor's thread (so rustyline keeps the terminal): `y`
//! once, `s` for this session, `a` always (saved to `permissions.allow`), anything else — an
//! empty line, `n`, Ctrl-C, Ctrl-D — denies; `n REASON` passes the reason to the model.

use std::sync::{Arc, Mutex};

use elroy_core::{Approval, ApprovalRequest, Approver, BoxFuture};
use indicatif::ProgressBar;
use rustyline::error::ReadlineError;

/// The spinner a turn shows, if any: the question clears it first so it does not draw over the
/// prompt.
pub(crate) type SpinnerSlot = Arc<Mutex<Option<ProgressBar>>>;

/// Makes `spinner` the one the question clears.
pub(crate) fn share(slot: &SpinnerSlot, spinner: &ProgressBar) {
    if let Ok(mut shared) = slot.lock() {
        *shared = Some(spinner.clone());
    }
}

/// Installs the line chat's approver on the runtime's permission gate where a person is at the
/// terminal (standard input and output); in a pipe nobody can answer, so a call that would ask
/// is refused. `colors` is the question's colour and the reset code.
pub(crate) fn install(
    runtime: &elroy_runtime::Runtime,
    ask: Arc<dyn Fn(Question) -> bool + Send + Sync>,
    spinner: &SpinnerSlot,
    colors: (&str, &str),
) {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return;
    }
    runtime
        .permissions
        .set_approver(Some(Arc::new(LineApprover {
            ask,
            spinner: Arc::clone(spinner),
            color: colors.0.to_owned(),
            reset: colors.1.to_owned(),
        })));
}

/// A question for the line editor's thread: read one line with this prompt, reply on the channel.
pub(crate) struct Question {
    /// The prompt, on one line.
    pub(crate) prompt: String,
    /// Where the answer goes.
    pub(crate) reply: tokio::sync::oneshot::Sender<Result<String, ReadlineError>>,
}

/// The line chat's [`Approver`].
pub(crate) struct LineApprover {
    /// Sends a question to the line editor's thread.
    pub(crate) ask: Arc<dyn Fn(Question) -> bool + Send + Sync>,
    /// The running turn's spinner.
    pub(crate) spinner: SpinnerSlot,
    /// Colour of the question and its details; and the reset code.
    pub(crate) color: String,
    pub(crate) reset: String,
}

/// The lines shown above the question: the tool and its effect, then each detail in full.
pub(crate) fn describe(request: &ApprovalRequest) -> Vec<String> {
    let mut lines = vec![format!(
        "{} ({}) needs your approval:",
        request.tool, request.class
    )];
    lines.extend(
        request
            .details
            .iter()
            .map(|(name, value)| format!("  {name}: {value}")),
    );
    lines.push(format!("  always allow saves: {}", request.rule));
    lines
}

/// The answer a typed line means.
pub(crate) fn parse_answer(line: &str) -> Approval {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word.to_lowercase().as_str() {
        "y" | "yes" => Approval::Once,
        "s" | "session" => Approval::Session,
        "a" | "always" => Approval::Always,
        "n" | "no" if !rest.trim().is_empty() => Approval::Deny {
            reason: Some(rest.trim().to_owned()),
        },
        _ => Approval::Deny { reason: None },
    }
}

impl Approver for LineApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            if let Ok(mut slot) = self.spinner.lock()
                && let Some(spinner) = slot.take()
            {
                spinner.finish_and_clear();
            }
            let mut text = describe(request).join("\n");
            text.push('\n');
            let _ = elroy_runtime::output::print(&format!("{}{text}{}", self.color, self.reset));
            let (reply, answer) = tokio::sync::oneshot::channel();
            let prompt = format!(
                "{}Allow {}? [y/N/s/a] {}",
                self.color, request.tool, self.reset
            );
            if !(self.ask)(Question { prompt, reply }) {
                return Approval::Deny { reason: None };
            }
            match answer.await {
                Ok(Ok(line)) => parse_answer(&line),
                _ => Approval::Deny { reason: None },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_answer_means_what_the_question_says() {
        assert_eq!(parse_answer("y"), Approval::Once);
        assert_eq!(parse_answer(" Yes "), Approval::Once);
        assert_eq!(parse_answer("s"), Approval::Session);
        assert_eq!(parse_answer("a"), Approval::Always);
        assert_eq!(parse_answer(""), Approval::Deny { reason: None });
        assert_eq!(parse_answer("N"), Approval::Deny { reason: None });
        assert_eq!(parse_answer("yy"), Approval::Deny { reason: None });
        assert_eq!(
            parse_answer("n not my keys"),
            Approval::Deny {
                reason: Some("not my keys".into())
            }
        );
    }
}
