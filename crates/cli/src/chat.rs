//! `elroy chat` (and `elroy` on a terminal): the interactive chat. A line editor with history in
//! `$ELROY_HOME/cache/history`, a spinner while waiting, the reply streamed as it arrives as
//! markdown rendered line by line (thoughts dimmed, code blocks set apart), Ctrl-C cancelling the running turn (the user message is stored
//! before the model is called, so it is kept), `exit` or Ctrl-D to leave, and `restart_session`
//! re-executing elroy with `ELROY_RESTART_RESUME_MESSAGE` (`orchestrator.md` §13).

use std::process::ExitCode;
use std::time::Duration;

use elroy_config::Config;
use elroy_core::Capabilities;
use elroy_orchestrator::{Session, TurnEvent, TurnInput};
use indicatif::{ProgressBar, ProgressStyle};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use crate::message::open_session;
use crate::render::MarkdownStream;

/// The variable carrying the hidden resume message across a restart (§13).
pub const RESUME_VARIABLE: &str = "ELROY_RESTART_RESUME_MESSAGE";

const RESET: &str = "\x1b[0m";

/// `#RRGGBB` (or a basic colour name) as an ANSI 24-bit foreground escape.
fn color(spec: &str) -> String {
    let hex = spec.trim_start_matches('#');
    if hex.len() == 6
        && let Ok(rgb) = u32::from_str_radix(hex, 16)
    {
        return format!(
            "\x1b[38;2;{};{};{}m",
            (rgb >> 16) & 0xff,
            (rgb >> 8) & 0xff,
            rgb & 0xff
        );
    }
    match spec {
        "yellow" => "\x1b[33m".into(),
        "red" => "\x1b[31m".into(),
        "green" => "\x1b[32m".into(),
        "blue" => "\x1b[34m".into(),
        "cyan" => "\x1b[36m".into(),
        _ => String::new(),
    }
}

struct Palette {
    reset: String,
    assistant: String,
    thought: String,
    system: String,
    warning: String,
    user: String,
}

impl Palette {
    /// Colours from the config when standard output is a terminal and `NO_COLOR` is unset; no
    /// escapes otherwise.
    fn from_config(config: &Config) -> Self {
        use std::io::IsTerminal;
        let enabled = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let c = |value: &str| {
            if enabled { color(value) } else { String::new() }
        };
        let keys = &config.settings;
        Palette {
            reset: if enabled { RESET.into() } else { String::new() },
            assistant: c(&keys.assistant_color),
            thought: c(&keys.internal_thought_color),
            system: c(&keys.system_message_color),
            warning: c(&keys.warning_color),
            user: c(&keys.user_input_color),
        }
    }
}

/// Renders a turn's events on the terminal.
struct Renderer<'a> {
    palette: &'a Palette,
    markdown: MarkdownStream,
    spinner: Option<ProgressBar>,
    show_thoughts: bool,
    in_thought: bool,
    wrote_text: bool,
}

impl<'a> Renderer<'a> {
    fn new(palette: &'a Palette, show_thoughts: bool) -> Self {
        let spinner = ProgressBar::new_spinner();
        spinner.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        spinner.set_message("thinking...");
        spinner.enable_steady_tick(Duration::from_millis(100));
        Renderer {
            palette,
            markdown: MarkdownStream::new(!palette.reset.is_empty()),
            spinner: Some(spinner),
            show_thoughts,
            in_thought: false,
            wrote_text: false,
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish_and_clear();
        }
    }

    fn print(&mut self, color: &str, text: &str) {
        self.stop_spinner();
        let reset = if color.is_empty() {
            ""
        } else {
            self.palette.reset.as_str()
        };
        // The chat goes on when its output cannot be written (the turn is still stored).
        let _ = crate::output::print(&format!("{color}{text}{reset}"));
    }

    /// Prints the rest of a markdown line held back while streaming.
    fn flush_markdown(&mut self) {
        let rest = self.markdown.finish();
        if !rest.is_empty() {
            let color = self.palette.assistant.clone();
            self.print(&color, &rest);
        }
    }

    fn end_thought(&mut self) {
        if self.in_thought {
            self.in_thought = false;
            self.print("", "\n");
        }
    }

    fn handle(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Status(text) => match &self.spinner {
                Some(spinner) => spinner.set_message(text),
                None if text.starts_with("running ") || text == "thinking..." => {
                    let spinner = ProgressBar::new_spinner();
                    spinner.set_message(text);
                    spinner.enable_steady_tick(Duration::from_millis(100));
                    self.spinner = Some(spinner);
                }
                None => {}
            },
            TurnEvent::Injected { text, .. } => {
                if self.show_thoughts {
                    let color = self.palette.thought.clone();
                    self.print(&color, &format!("{text}\n"));
                }
            }
            TurnEvent::ThoughtDelta(text) => {
                if self.show_thoughts {
                    self.in_thought = true;
                    let color = self.palette.thought.clone();
                    self.print(&color, &text);
                }
            }
            TurnEvent::TextDelta(text) => {
                self.end_thought();
                self.wrote_text = true;
                let rendered = self.markdown.push(&text);
                if !rendered.is_empty() {
                    let color = self.palette.assistant.clone();
                    self.print(&color, &rendered);
                } else {
                    self.stop_spinner();
                }
            }
            TurnEvent::CodeBlock { language, content } => {
                self.flush_markdown();
                self.end_thought();
                self.wrote_text = true;
                let color = self.palette.system.clone();
                self.print(&color, &format!("\n```{language}\n{content}```\n"));
            }
            TurnEvent::ToolCall {
                name, arguments, ..
            } => {
                self.flush_markdown();
                self.end_thought();
                if self.wrote_text {
                    self.print("", "\n");
                    self.wrote_text = false;
                }
                let color = self.palette.system.clone();
                self.print(&color, &format!("[{name}] {arguments}\n"));
            }
            TurnEvent::ToolResult {
                content, is_error, ..
            } => {
                let color = if is_error {
                    self.palette.warning.clone()
                } else {
                    self.palette.thought.clone()
                };
                let short: String = content.chars().take(200).collect();
                let more = if content.chars().count() > 200 {
                    "…"
                } else {
                    ""
                };
                self.print(&color, &format!("  → {short}{more}\n"));
            }
            TurnEvent::Error(message) => {
                self.flush_markdown();
                let color = self.palette.warning.clone();
                self.print(&color, &format!("\nerror: {message}\n"));
            }
            TurnEvent::Cancelled => {
                self.flush_markdown();
                let color = self.palette.warning.clone();
                self.print(&color, "\n(cancelled)\n");
            }
            TurnEvent::Done => {
                self.flush_markdown();
                self.end_thought();
                self.print("", "\n");
            }
        }
    }
}

/// Runs one turn with Ctrl-C cancelling it. Returns the restart message, if any.
fn run_turn(
    runtime: &tokio::runtime::Runtime,
    session: &Session,
    input: &TurnInput,
    palette: &Palette,
) -> Option<String> {
    let show = session.parts().settings.show_internal_thought;
    let mut renderer = Renderer::new(palette, show);
    let outcome = runtime.block_on(async {
        let mut sink = |event: TurnEvent| renderer.handle(event);
        tokio::select! {
            result = session.turn(input, &mut sink) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    match outcome {
        None => {
            renderer.handle(TurnEvent::Cancelled);
            None
        }
        Some(Ok(outcome)) => {
            // Every background step runs; each failure is shown as a warning line (and logged).
            let report = runtime.block_on(session.after_turn());
            let color = palette.warning.clone();
            for failure in &report.failures {
                renderer.print(
                    &color,
                    &format!("warning: background work after the turn: {failure}\n"),
                );
            }
            outcome.restart
        }
        Some(Err(_)) => None,
    }
}

/// Re-executes this program with the same arguments plus the resume message (§13).
pub(crate) fn restart(resume_message: &str) -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot restart: {e}"))?;
    let mut command = std::process::Command::new(exe);
    command
        .args(std::env::args_os().skip(1))
        .env(RESUME_VARIABLE, resume_message);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        Err(format!("cannot restart: {error}"))
    }
    #[cfg(not(unix))]
    {
        let status = command
            .status()
            .map_err(|e| format!("cannot restart: {e}"))?;
        Ok(ExitCode::from(
            u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
        ))
    }
}

pub(crate) fn run(config: Config) -> Result<ExitCode, String> {
    let palette = Palette::from_config(&config);
    let history = config.paths.history_file();
    let session = open_session(config, Capabilities { can_restart: true })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let mut editor = DefaultEditor::new().map_err(|e| format!("cannot open the terminal: {e}"))?;
    if let Some(parent) = history.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = editor.load_history(&history);

    // §2.1 step 7: the session-context pair.
    if let Err(e) = session.add_session_context() {
        tracing::warn!("could not add the session context: {e}");
    }

    // A restart hands over a hidden resume message (§13). The variable cannot be removed from
    // this process without unsafe code; a later restart overwrites it.
    if let Ok(resume) = std::env::var(RESUME_VARIABLE)
        && !resume.trim().is_empty()
        && let Some(message) = run_turn(&runtime, &session, &TurnInput::hidden(resume), &palette)
    {
        return restart(&message);
    }

    let prompt = format!("{}> {}", palette.user, palette.reset);
    loop {
        match editor.readline(&prompt) {
            Ok(line) => {
                let text = line.trim();
                if text.is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(text);
                let _ = editor.save_history(&history);
                if matches!(text, "exit" | "quit" | "/exit" | "/quit") {
                    break;
                }
                if let Some(message) = run_turn(&runtime, &session, &TurnInput::new(text), &palette)
                {
                    return restart(&message);
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(format!("cannot read input: {e}")),
        }
    }
    Ok(ExitCode::SUCCESS)
}
