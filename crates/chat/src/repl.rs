//! `elroy chat --plain` (and `elroy` on a terminal with `ui: plain`): the line REPL. A one-line
//! banner (model, home, `/help`); a line editor with history in `$ELROY_HOME/cache/history` and
//! Tab completion of the slash commands (elroy-commands); slash commands run without the model;
//! a spinner while waiting, then the reply streamed word by word as markdown (thoughts dimmed,
//! code blocks set apart, wrapping between words); Ctrl-C cancelling the running turn (the user
//! message is stored before the model is called, so it is kept), `/exit`, `exit` or Ctrl-D to
//! leave; and `restart_session` re-executing elroy with `ELROY_RESTART_RESUME_MESSAGE`
//! (`docs/behaviour.md#restarting-a-session`).
//!
//! The line editor runs on its own thread ([`LineReader`]) so that the background work after a
//! reply (memory, consolidation, context refresh) runs while the next line is typed; a line
//! submitted before it finished waits for it (a turn and the refresh must not interleave), and
//! leaving waits for it at most [`EXIT_WAIT`]. Reminders that come due while elroy waits for
//! input are printed above the prompt without disturbing the typed text
//! ([`crate::reminders`]).

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elroy_commands::{Action, ChatSession, CommandOutput, CompletionNames, Input};
use elroy_config::Config;
use elroy_orchestrator::{AfterTurn, Session, TurnEvent, TurnInput};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rustyline::error::ReadlineError;

use crate::approve::{Question, SpinnerSlot, share};
use rustyline::history::FileHistory;
use rustyline::{Editor, ExternalPrinter};

use crate::render::MarkdownStream;
use crate::style::Palette;

/// How long leaving waits for the background work after the last reply.
pub const EXIT_WAIT: Duration = Duration::from_secs(5);

/// The variable carrying the hidden resume message across a restart
/// (`docs/behaviour.md#restarting-a-session`).
pub const RESUME_VARIABLE: &str = "ELROY_RESTART_RESUME_MESSAGE";

/// A spinner on standard error; hidden where `TERM` is dumb (it redraws with escape codes).
fn new_spinner() -> ProgressBar {
    let spinner = ProgressBar::new_spinner();
    if elroy_commands::front_end::dumb_terminal() {
        spinner.set_draw_target(ProgressDrawTarget::hidden());
    }
    spinner
}

/// Renders a turn's events on the terminal.
struct Renderer<'a> {
    palette: &'a Palette,
    markdown: MarkdownStream,
    spinner: Option<ProgressBar>,
    /// Where the approval question finds the spinner to clear it.
    slot: SpinnerSlot,
    show_thoughts: bool,
    in_thought: bool,
    wrote_text: bool,
}

impl<'a> Renderer<'a> {
    fn new(palette: &'a Palette, show_thoughts: bool, slot: SpinnerSlot) -> Self {
        let spinner = new_spinner();
        spinner.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        spinner.set_message("thinking...");
        spinner.enable_steady_tick(Duration::from_millis(100));
        share(&slot, &spinner);
        Renderer {
            slot,
            palette,
            markdown: MarkdownStream::new(!palette.reset.is_empty(), terminal_width()),
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
        let _ = elroy_runtime::output::print(&format!("{color}{text}{reset}"));
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
                Some(spinner) if !spinner.is_finished() => spinner.set_message(text),
                // No spinner, or one the approval question cleared.
                _ if text.starts_with("running ") || text == "thinking..." => {
                    let spinner = new_spinner();
                    spinner.set_message(text);
                    spinner.enable_steady_tick(Duration::from_millis(100));
                    share(&self.slot, &spinner);
                    self.spinner = Some(spinner);
                }
                _ => {}
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
                let styled = !self.palette.reset.is_empty();
                self.print(
                    &color,
                    &crate::render::code_block(&language, &content, styled),
                );
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

/// The width of standard output when it is a terminal (`None`: no wrapping).
fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
}

/// The background work after a reply, running while the next line is read.
type Background = Pin<Box<dyn Future<Output = AfterTurn>>>;

/// Runs one turn with Ctrl-C cancelling it. Returns the restart message, if any, and the
/// background work to run after it (not started yet: the caller polls it while reading input).
fn run_turn(
    runtime: &tokio::runtime::Runtime,
    session: &Arc<Session>,
    input: &TurnInput,
    palette: &Palette,
    slot: &SpinnerSlot,
) -> (Option<String>, Option<Background>) {
    let show = session.parts().settings.show_internal_thought;
    let mut renderer = Renderer::new(palette, show, Arc::clone(slot));
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
            (None, None)
        }
        Some(Ok(outcome)) => {
            let session = Arc::clone(session);
            let background: Background = Box::pin(async move { session.after_turn().await });
            (outcome.restart, Some(background))
        }
        Some(Err(_)) => (None, None),
    }
}

/// Shows the failures of the background work, each as one warning line.
fn report_background(report: &AfterTurn, palette: &Palette, printer: &SharedPrinter) {
    for failure in &report.failures {
        printer.print(&format!(
            "{}warning: background work after the turn: {failure}{}",
            palette.warning, palette.reset
        ));
    }
}

/// Waits for the background work before the next turn or command; says so when it has to wait.
fn finish_background(
    runtime: &tokio::runtime::Runtime,
    background: &mut Option<Background>,
    palette: &Palette,
    printer: &SharedPrinter,
) {
    if let Some(work) = background.take() {
        let report = runtime.block_on(work);
        report_background(&report, palette, printer);
    }
}

/// On exit: waits for the background work at most `limit`, then says what was not finished.
fn finish_background_on_exit(
    runtime: &tokio::runtime::Runtime,
    background: Option<Background>,
    palette: &Palette,
    printer: &SharedPrinter,
    limit: Duration,
) {
    let Some(work) = background else {
        return;
    };
    match runtime.block_on(async { tokio::time::timeout(limit, work).await }) {
        Ok(report) => report_background(&report, palette, printer),
        Err(_) => printer.print(&format!(
            "{}Stopped waiting after {} s: the background work after the last reply (automatic memory, self-reflection, context refresh, consolidation) did not finish; what it had not written yet runs again after a later turn.{}",
            palette.warning,
            limit.as_secs(),
            palette.reset
        )),
    }
}

/// Stops the MCP servers before a restart: `exec` runs no destructor, and the new process starts
/// its own servers.
fn stop_mcp_servers(chat: &ChatSession) {
    if let Some(mcp) = &chat.runtime().mcp {
        mcp.shutdown();
    }
}

/// Re-executes this program with the same arguments plus the resume message
/// (`docs/behaviour.md#restarting-a-session`).
pub fn restart(resume_message: &str) -> Result<ExitCode, String> {
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

/// Where lines that must not disturb the prompt go: rustyline's external printer while the
/// editor runs on a terminal, else standard output.
#[derive(Clone, Default)]
pub(crate) struct SharedPrinter(Option<Arc<Mutex<Box<dyn ExternalPrinter + Send>>>>);

impl SharedPrinter {
    /// Prints one line (a newline is added).
    pub(crate) fn print(&self, line: &str) {
        if let Some(printer) = &self.0
            && let Ok(mut printer) = printer.lock()
            && printer.print(format!("{line}\n")).is_ok()
        {
            return;
        }
        let _ = elroy_runtime::output::println(line);
    }
}

/// Where the background embedding's progress goes in the REPL: above the prompt (the external
/// printer) when standard input and output are a terminal, else stderr; and the log.
fn embedding_progress(printer: &SharedPrinter) -> elroy_runtime::reembed::ProgressSink {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let printer = printer.clone();
        Arc::new(move |p: &elroy_runtime::reembed::EmbedProgress| {
            tracing::info!("{p}");
            printer.print(&p.to_string());
        })
    } else {
        elroy_runtime::reembed::stderr_progress()
    }
}

/// Completes the slash commands (elroy-commands) in the line editor.
struct ChatHelper {
    names: Arc<Mutex<CompletionNames>>,
}

impl rustyline::completion::Completer for ChatHelper {
    type Candidate = rustyline::completion::Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Self::Candidate>)> {
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        let candidates = elroy_commands::complete(line, pos, &names);
        let start = candidates.first().map_or(pos, |c| c.start);
        Ok((
            start,
            candidates
                .into_iter()
                .map(|c| rustyline::completion::Pair {
                    display: if c.help.is_empty() {
                        c.replacement.clone()
                    } else {
                        format!("{}  {}", c.replacement, c.help)
                    },
                    replacement: c.replacement,
                })
                .collect(),
        ))
    }
}

impl rustyline::hint::Hinter for ChatHelper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for ChatHelper {}
impl rustyline::validate::Validator for ChatHelper {}
impl rustyline::Helper for ChatHelper {}

/// What the editor thread is asked to do.
enum Request {
    /// Read one line with this prompt.
    Read(String),
    /// Add a line to the history and save the history file.
    Remember(String),
    /// Ask the person a question (an approval) and reply with the line.
    Ask(Question),
}

/// The line editor on its own thread: [`LineReader::read`] waits for a line while the caller's
/// async runtime drives other work (the background work after a reply).
struct LineReader {
    requests: std::sync::mpsc::Sender<Request>,
    lines: tokio::sync::mpsc::UnboundedReceiver<Result<String, ReadlineError>>,
    /// True while the editor waits for input (reminders are printed only then).
    at_prompt: Arc<AtomicBool>,
    printer: SharedPrinter,
}

impl LineReader {
    fn start(
        history: std::path::PathBuf,
        names: Arc<Mutex<CompletionNames>>,
    ) -> Result<Self, String> {
        let mut editor: Editor<ChatHelper, FileHistory> =
            Editor::new().map_err(|e| format!("cannot open the terminal: {e}"))?;
        editor.set_helper(Some(ChatHelper { names }));
        if let Some(parent) = history.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = editor.load_history(&history);
        let printer = SharedPrinter(
            editor
                .create_external_printer()
                .ok()
                .map(|p| Arc::new(Mutex::new(Box::new(p) as Box<dyn ExternalPrinter + Send>))),
        );
        let (requests, inbox) = std::sync::mpsc::channel::<Request>();
        let (outbox, lines) = tokio::sync::mpsc::unbounded_channel();
        let at_prompt = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&at_prompt);
        std::thread::Builder::new()
            .name("elroy-line-editor".into())
            .spawn(move || {
                for request in inbox {
                    match request {
                        Request::Read(prompt) => {
                            flag.store(true, Ordering::SeqCst);
                            let line = editor.readline(&prompt);
                            flag.store(false, Ordering::SeqCst);
                            if outbox.send(line).is_err() {
                                break;
                            }
                        }
                        Request::Ask(question) => {
                            let _ = question.reply.send(editor.readline(&question.prompt));
                        }
                        Request::Remember(line) => {
                            let _ = editor.add_history_entry(line);
                            let _ = editor.save_history(&history);
                        }
                    }
                }
            })
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
        Ok(LineReader {
            requests,
            lines,
            at_prompt,
            printer,
        })
    }

    /// Reads one line; meanwhile drives `background` to its end (and shows its warnings).
    fn read(
        &mut self,
        prompt: &str,
        runtime: &tokio::runtime::Runtime,
        background: &mut Option<Background>,
        palette: &Palette,
    ) -> Result<String, ReadlineError> {
        if self
            .requests
            .send(Request::Read(prompt.to_owned()))
            .is_err()
        {
            return Err(ReadlineError::Eof);
        }
        let printer = self.printer.clone();
        let lines = &mut self.lines;
        runtime.block_on(async {
            if let Some(work) = background.as_mut() {
                tokio::select! {
                    line = lines.recv() => return line.unwrap_or(Err(ReadlineError::Eof)),
                    report = work => {
                        report_background(&report, palette, &printer);
                    }
                }
                *background = None;
            }
            lines.recv().await.unwrap_or(Err(ReadlineError::Eof))
        })
    }

    fn remember(&self, line: &str) {
        let _ = self.requests.send(Request::Remember(line.to_owned()));
    }
}

/// Prints a command's output: markdown lines rendered like a reply, errors in the warning colour.
fn print_output(output: &CommandOutput, palette: &Palette) {
    let color = if output.is_error {
        &palette.warning
    } else {
        &palette.system
    };
    let mut markdown = MarkdownStream::new(!palette.reset.is_empty(), terminal_width());
    let mut text = String::new();
    for line in &output.lines {
        text.push_str(&markdown.push(line));
        text.push_str(&markdown.push("\n"));
    }
    text.push_str(&markdown.finish());
    if !text.is_empty() {
        let _ = elroy_runtime::output::print(&format!("{color}{text}{}", palette.reset));
    }
}

/// The one-line banner: `elroy · model NAME · home DIR · /help for commands`.
pub(crate) fn banner(model: &str, home: &std::path::Path) -> String {
    format!(
        "elroy · model {model} · home {} · /help for commands, Ctrl-D to leave",
        home.display()
    )
}

/// Runs the line chat on `config`'s home until `/exit`, `exit` or Ctrl-D (or re-executes elroy for
/// a restart); the exit status to end with.
///
/// # Errors
/// The terminal, the line editor or the async runtime cannot be opened, the home cannot be
/// opened, or input cannot be read (one line of text for the front end's error line).
pub fn run(config: Config) -> Result<ExitCode, String> {
    // Ctrl+C cancels a turn here; SIGTERM and SIGHUP stop the MCP servers and end elroy.
    elroy_mcp_client::signals::handled_by_front_end(&[
        elroy_mcp_client::signals::Ending::Interrupt,
    ]);
    let palette = Palette::from_config(&config);
    let history = config.paths.history_file();
    let home = config.paths.elroy_home.clone();
    let mut chat = crate::open::open_chat(config)?;
    for warning in &chat.runtime().warnings {
        tracing::warn!("{warning}");
    }
    chat.runtime().warn_untrusted();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let names = Arc::new(Mutex::new(chat.completion_names()));
    let mut reader = LineReader::start(history, Arc::clone(&names))?;
    let printer = reader.printer.clone();
    let slot = SpinnerSlot::default();
    let requests = Mutex::new(reader.requests.clone());
    crate::approve::install(
        chat.runtime(),
        Arc::new(move |question| {
            requests
                .lock()
                .is_ok_and(|r| r.send(Request::Ask(question)).is_ok())
        }),
        &slot,
        (&palette.warning, &palette.reset),
    );
    let _ = elroy_runtime::output::println(&format!(
        "{}{}{}",
        palette.system,
        banner(chat.model_name().unwrap_or("none"), &home),
        palette.reset
    ));

    // `docs/behaviour.md#start-up-steps` step 7: the session-context pair.
    if let Some(session) = chat.session()
        && let Err(e) = session.add_session_context()
    {
        tracing::warn!("could not add the session context: {e}");
    }

    // Memories lacking a vector of the configured embedding model are embedded in the
    // background; its progress goes above the prompt on a terminal, else to stderr.
    let _embedding = chat
        .runtime()
        .start_background_embedding(embedding_progress(&printer));

    let mut background: Option<Background> = None;
    // A restart hands over a hidden resume message (`docs/behaviour.md#restarting-a-session`). The
    // variable cannot be removed from this process without unsafe code; a later restart overwrites
    // it.
    if let Ok(resume) = std::env::var(RESUME_VARIABLE)
        && !resume.trim().is_empty()
        && let Some(session) = chat.shared_session()
    {
        let (restart_message, work) = run_turn(
            &runtime,
            &session,
            &TurnInput::hidden(resume),
            &palette,
            &slot,
        );
        if let Some(message) = restart_message {
            stop_mcp_servers(&chat);
            return restart(&message);
        }
        background = work;
    }

    let reminders = crate::reminders::start_in_session(&chat, &reader.at_prompt, &printer);

    let prompt = format!("{}> {}", palette.user, palette.reset);
    loop {
        match reader.read(&prompt, &runtime, &mut background, &palette) {
            Ok(line) => {
                if line.trim().is_empty() {
                    continue;
                }
                reader.remember(line.trim());
                match elroy_commands::parse(&line) {
                    Input::Empty => {}
                    Input::Unknown { word } => print_output(
                        &CommandOutput {
                            lines: elroy_commands::unknown_message(&word),
                            is_error: true,
                            action: None,
                        },
                        &palette,
                    ),
                    Input::Invalid { message } => print_output(
                        &CommandOutput {
                            lines: vec![message],
                            is_error: true,
                            action: None,
                        },
                        &palette,
                    ),
                    Input::Command(command) => {
                        if command.waits_for_background() {
                            finish_background(&runtime, &mut background, &palette, &printer);
                        }
                        let output = runtime.block_on(elroy_commands::run(&command, &mut chat));
                        print_output(&output, &palette);
                        if let Ok(mut names) = names.lock() {
                            *names = chat.completion_names();
                        }
                        if output.action == Some(Action::Exit) {
                            break;
                        }
                    }
                    Input::NotCommand(text) => {
                        let Some(session) = chat.shared_session() else {
                            let not_sent = CommandOutput {
                                lines: vec![crate::open::NOT_SENT.to_owned()],
                                is_error: true,
                                action: None,
                            };
                            print_output(&not_sent, &palette);
                            continue;
                        };
                        finish_background(&runtime, &mut background, &palette, &printer);
                        let (restart_message, work) = run_turn(
                            &runtime,
                            &session,
                            &TurnInput::new(text.trim()),
                            &palette,
                            &slot,
                        );
                        if let Some(message) = restart_message {
                            stop_mcp_servers(&chat);
                            return restart(&message);
                        }
                        background = work;
                        // The model may have created or renamed memories.
                        if let Ok(mut names) = names.lock() {
                            *names = chat.completion_names();
                        }
                    }
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(format!("cannot read input: {e}")),
        }
    }
    drop(reminders);
    finish_background_on_exit(&runtime, background, &palette, &printer, EXIT_WAIT);
    Ok(ExitCode::SUCCESS)
}
