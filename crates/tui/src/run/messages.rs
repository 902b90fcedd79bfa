//! The messages merged on the event loop's channel (the running turn, tools, sidebar loads,
//! reminders, background work, approvals) and the terminal's events, into [`App`] and [`Loop`].

use elroy_commands::Action as CommandAction;
use elroy_orchestrator::TurnEvent;
use ratatui::crossterm::event::Event;

use super::Loop;
use crate::app::{Action, App};
use crate::approval::{Prompt, PromptKey};
use crate::conversation::NoticeKind;
use crate::sidebar::Tab;

/// One message of the loop's channel.
pub(super) enum Msg {
    Turn(u64, TurnEvent),
    TurnEnd(u64, Result<Option<String>, super::TurnFailed>),
    Tool {
        name: String,
        arguments: String,
        content: String,
        is_error: bool,
        form: bool,
    },
    Sidebar(Vec<Tab>),
    Reminders(Vec<crate::app::Reminder>),
    BackgroundDone(Vec<String>),
    Tokens(usize),
    Names(elroy_commands::CompletionNames),
    /// A command's output, the model after it, and whether it was `/help` (the keys follow).
    Command(elroy_commands::CommandOutput, String, bool),
    /// The background embedding's progress.
    Embedding(elroy_runtime::reembed::EmbedProgress),
    /// The local servers the first-run search found.
    Servers(Vec<elroy_commands::LocalServer>),
    /// The first-run choice started (the lines to show, the model's name) or why not.
    Adopted(Result<(Vec<String>, String), elroy_commands::FirstRunError>),
    /// A model's call waits for the person's approval.
    Approval(
        elroy_core::ApprovalRequest,
        tokio::sync::oneshot::Sender<elroy_core::Approval>,
    ),
    /// A model's call was refused: one line in the conversation.
    Refused(String),
}

/// One terminal event into the approval prompt while one is up (keys and pastes), else into the
/// app. Ctrl+C at a prompt denies the call and cancels the turn.
pub(super) fn on_input(
    app: &mut App,
    prompts: &mut std::collections::VecDeque<Prompt>,
    event: Event,
) -> Vec<Action> {
    let Some(prompt) = prompts.front_mut() else {
        return on_event(app, event);
    };
    match event {
        Event::Key(key) => match prompt.on_key(key) {
            PromptKey::Open => Vec::new(),
            PromptKey::Answered => {
                prompts.pop_front();
                Vec::new()
            }
            PromptKey::Interrupt => vec![Action::Cancel],
        },
        Event::Paste(text) => {
            prompt.on_paste(&text);
            Vec::new()
        }
        other => on_event(app, other),
    }
}

/// One terminal event into the app.
fn on_event(app: &mut App, event: Event) -> Vec<Action> {
    match event {
        Event::Key(key) => return app.on_key(key),
        Event::Paste(text) => app.on_paste(&text),
        Event::Mouse(mouse) => app.on_mouse(mouse),
        Event::Resize(..) => app.on_resize(),
        _ => {}
    }
    Vec::new()
}

/// One message of the loop's channel into the app and the loop.
pub(super) fn handle(app: &mut App, lp: &mut Loop, msg: Msg) -> Vec<Action> {
    match msg {
        Msg::Turn(generation, event) => {
            if lp.turn.as_ref().is_some_and(|(g, _)| *g == generation) {
                app.on_turn_event(event);
            }
            Vec::new()
        }
        Msg::TurnEnd(generation, result) => {
            if lp.turn.as_ref().is_none_or(|(g, _)| *g != generation) {
                return Vec::new();
            }
            lp.turn = None;
            let ok = result.is_ok();
            if let Ok(Some(message)) = result {
                lp.restart = Some(message);
            }
            let actions = app.on_turn_end();
            if ok {
                lp.start_background(app);
            }
            actions
        }
        Msg::Tool {
            name,
            arguments,
            content,
            is_error,
            form,
        } => app.on_tool_result(&name, &arguments, content, is_error, form),
        Msg::Sidebar(tabs) => {
            lp.loading = false;
            app.on_sidebar(tabs);
            if std::mem::take(&mut lp.reload) {
                lp.refresh();
            }
            Vec::new()
        }
        Msg::Reminders(reminders) => app.on_reminders(reminders),
        Msg::BackgroundDone(failures) => {
            app.status.background = None;
            for failure in failures {
                app.notice(
                    NoticeKind::Warning,
                    format!("warning: background work after the turn: {failure}"),
                );
            }
            vec![Action::Refresh]
        }
        Msg::Names(names) => {
            app.completion.models = names.models;
            if app.completion.memories.is_empty() {
                app.completion.memories = names.memories;
            }
            Vec::new()
        }
        Msg::Tokens(tokens) => {
            app.status.tokens = Some(tokens);
            Vec::new()
        }
        Msg::Approval(request, reply) => {
            lp.prompts.push_back(Prompt::new(request, reply));
            Vec::new()
        }
        Msg::Refused(text) => {
            app.notice(NoticeKind::Warning, text);
            Vec::new()
        }
        Msg::Embedding(progress) => {
            use elroy_runtime::reembed::EmbedProgress;
            match &progress {
                EmbedProgress::Started { total, .. } => {
                    app.status.embedding = Some(format!("embedding memories 0/{total}"));
                }
                EmbedProgress::Progress { done, total, .. } => {
                    app.status.embedding = Some(format!("embedding memories {done}/{total}"));
                }
                EmbedProgress::Finished { .. } => {
                    app.status.embedding = None;
                    app.notice(NoticeKind::Info, progress.to_string());
                }
            }
            Vec::new()
        }
        Msg::Servers(servers) => {
            crate::first_run::on_servers(app, servers);
            Vec::new()
        }
        Msg::Adopted(result) => {
            let ok = result.is_ok();
            crate::first_run::on_adopted(app, result);
            if ok {
                lp.load_names();
            }
            vec![Action::Refresh]
        }
        Msg::Command(mut output, model, help) => {
            if help {
                // The keys from the table the handlers use (crate::keys), after the commands.
                output.lines.extend(crate::keys::help_lines(&app.tabs));
            }
            match &output.action {
                Some(CommandAction::Exit) => app.quitting = true,
                Some(CommandAction::ClearContext) => app.entries.clear(),
                Some(CommandAction::SwitchModel(_)) | None => {}
            }
            app.status.model = model;
            app.on_command_output(&output.lines, output.is_error);
            vec![Action::Refresh]
        }
    }
}
