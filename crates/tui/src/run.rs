//! The event loop: the terminal (read by [`crate::terminal_input`]), signals, the running turn, tools run from the
//! palette or browse mode, background work after a reply, sidebar loads and reminders, all
//! merged on one channel into [`App`]; the screen is drawn after each batch of messages.

use crate::approval::{Prompt, TuiApprover};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use elroy_commands::{ChatSession, Input};
use elroy_config::Config;
use elroy_core::Capabilities;
use elroy_core::{TimeContext, ToolRegistry};
use elroy_mcp_client::McpClients;
use elroy_orchestrator::{Session, TurnEvent, TurnInput};
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::{Terminal, backend::CrosstermBackend};
use tokio::sync::{RwLock, mpsc};
use tokio::task::JoinHandle;

mod error;
mod messages;

use error::TurnFailed;
pub use error::{EditorError, TuiError};

use messages::{Msg, handle, on_input};

use crate::app::{Action, App};
use crate::conversation::NoticeKind;
use crate::palette::PaletteEntry;
use crate::sidebar::SidebarSource;
use crate::signals::{Ending, Received, Signals};
use crate::source::StoreSidebar;
use crate::terminal_input::Reader;
use crate::theme::Theme;
use elroy_commands::{InterfaceReminders, NoReminders, ReminderSource};

/// How long quitting waits for background work after the last reply.
pub const QUIT_WAIT: Duration = Duration::from_secs(5);
/// The variable carrying the hidden resume message across a restart
/// (`docs/behaviour.md#restarting-a-session`).
pub const RESUME_VARIABLE: &str = "ELROY_RESTART_RESUME_MESSAGE";

/// How the interface ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The user left; the exit code to return.
    Exit(ExitCode),
    /// `restart_session` asked for a restart with this resume message: the caller re-executes
    /// elroy with it in [`RESUME_VARIABLE`].
    Restart(String),
}

/// The terminal in raw mode on the alternate screen; restored when dropped (also on errors and
/// panics that unwind), and around `$EDITOR`.
struct Terminal_ {
    terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
    active: bool,
}

impl Terminal_ {
    fn enter() -> std::io::Result<Self> {
        let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        let mut this = Terminal_ {
            terminal,
            active: false,
        };
        this.resume()?;
        Ok(this)
    }

    fn resume(&mut self) -> std::io::Result<()> {
        enable_raw_mode()?;
        self.active = true;
        execute!(
            self.terminal.backend_mut(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture,
            Clear(ClearType::All)
        )?;
        // Fresh buffers: the next draw paints every cell (`Terminal::clear` would ask the
        // terminal for the cursor position, which not every terminal answers).
        self.terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
        Ok(())
    }

    fn leave(&mut self) {
        if !std::mem::take(&mut self.active) {
            return;
        }
        let _ = disable_raw_mode();
        let _ = execute!(
            self.terminal.backend_mut(),
            DisableMouseCapture,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            Show
        );
    }

    /// Sets the terminal up again after the process was stopped and continued: whatever the
    /// shell did to the terminal meanwhile (line mode, the main screen) is undone, and the next
    /// draw paints every cell at the current size.
    fn reenter(&mut self) -> std::io::Result<()> {
        // crossterm's raw mode remembers it is on and would not apply it again.
        self.leave();
        self.resume()
    }
}

impl Drop for Terminal_ {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Opens the home, starts a session (through the composition root, as an elroy-commands
/// [`ChatSession`] so `/…` commands run on it) and runs the full-screen interface until the user
/// leaves.
///
/// # Errors
/// [`TuiError`] when the session cannot start or the terminal cannot be set up.
pub fn run(config: Config) -> Result<Outcome, TuiError> {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme = Theme::from_config(&config, no_color);
    let history = config.paths.history_file();
    let show_thoughts = config.settings.show_internal_thought;
    let proactive = config.settings.proactive_reminders;
    let home = config.paths.elroy_home.display().to_string();
    // The first screen is drawn before the home is opened, so it does not wait for the stores or
    // the model client however large the home is; the sidebar and the token estimate follow.
    // A panic (a bug) restores the terminal before its message is printed, so it can be read on
    // the main screen; the hook runs before unwinding starts, so this holds with
    // `panic = "abort"` too.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = disable_raw_mode();
        let _ = execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            Show
        );
        previous(info);
    }));
    // The runtime and the signal handlers come before the terminal is set up, so a signal that
    // arrives while the home opens cannot end elroy with the terminal in raw mode.
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(TuiError::AsyncRuntime)?;
    let signals = {
        let _context = tokio_rt.enter();
        Signals::register().map_err(TuiError::Signals)?
    };
    // The interface ends itself on these (restoring the terminal); its exit stops the MCP servers.
    {
        use elroy_mcp_client::signals::{Ending, handled_by_front_end};
        handled_by_front_end(&[Ending::Interrupt, Ending::Terminate, Ending::Hangup]);
    }
    let mut term = Terminal_::enter().map_err(TuiError::Terminal)?;
    let mut app = App::new(theme, Some(history), &[]);
    app.status.home = shorten_home(&home);
    app.status.phase = Some("opening the home…".into());
    let _ = term.terminal.draw(|frame| crate::ui::render(&app, frame));
    // Warnings go to the log: stderr is under the full-screen interface. Without a chat model
    // the interface opens all the same, with the first-run panel.
    let chat = ChatSession::open_without_model_allowed(
        config,
        Capabilities { can_restart: true },
        elroy_runtime::logged_warnings(),
    )?;
    for warning in &chat.runtime().warnings {
        tracing::warn!("{warning}");
    }
    if let Some(Err(e)) = chat.session().map(Session::add_session_context) {
        tracing::warn!("could not add the session context: {e}");
    }
    if let Some(why) = chat.no_model() {
        tracing::info!("first run: {why}");
        app.first_run = Some(crate::first_run::FirstRun::searching());
        // The MCP servers start with a session; without one they start now, for the palette.
        chat.runtime().start_mcp_servers();
    }
    let runtime = chat.runtime();
    let panels: Vec<String> = runtime
        .services
        .get::<elroy_plugins::Panels>()
        .map(|p| p.0.iter().map(|p| p.title.clone()).collect())
        .unwrap_or_default();
    app.tabs = crate::sidebar::initial_tabs(&panels);
    // Plugins not run because they are not trusted: one line (stderr is hidden here).
    if let Some(line) = runtime
        .services
        .get::<elroy_plugins::Untrusted>()
        .and_then(|u| elroy_plugins::untrusted_summary(&u.0))
    {
        app.notice(NoticeKind::Warning, line);
    }
    app.status.phase = None;
    app.show_thoughts = show_thoughts;
    app.proactive = proactive;
    app.status.model = chat.model_name().unwrap_or(NO_MODEL).to_owned();
    app.tools = runtime
        .registry
        .specs()
        .into_iter()
        .map(PaletteEntry::tool)
        .collect();
    let result = tokio_rt.block_on(event_loop(app, chat, term, signals));
    // Background tasks still running (a stuck plugin panel) are not waited for again.
    tokio_rt.shutdown_timeout(Duration::from_millis(100));
    result
}

/// `/home/me/.elroy` as `~/.elroy`.
fn shorten_home(home: &str) -> String {
    match std::env::var("HOME") {
        Ok(h) if !h.is_empty() && home.starts_with(&h) => format!("~{}", &home[h.len()..]),
        _ => home.to_owned(),
    }
}

struct Loop {
    tx: mpsc::UnboundedSender<Msg>,
    chat: Arc<RwLock<ChatSession>>,
    time: TimeContext,
    sidebar: Arc<dyn SidebarSource>,
    reminders: Arc<dyn ReminderSource>,
    turn: Option<(u64, JoinHandle<()>)>,
    generation: u64,
    background: Option<JoinHandle<()>>,
    loading: bool,
    reload: bool,
    restart: Option<String>,
    /// Approval prompts, the first one shown.
    prompts: std::collections::VecDeque<Prompt>,
}

impl Loop {
    /// The loop of `chat`, sending its messages on `tx`.
    fn new(tx: mpsc::UnboundedSender<Msg>, chat: ChatSession) -> Loop {
        let time = chat.runtime().time.clone();
        let sidebar: Arc<dyn SidebarSource> = Arc::new(StoreSidebar::new(
            chat.runtime().services.clone(),
            time.clone(),
        ));
        let reminders: Arc<dyn ReminderSource> = match InterfaceReminders::open(&chat, time.now()) {
            Some(source) => Arc::new(source),
            None => Arc::new(NoReminders),
        };
        Loop {
            tx,
            chat: Arc::new(RwLock::new(chat)),
            time,
            sidebar,
            reminders,
            turn: None,
            generation: 0,
            background: None,
            loading: false,
            reload: false,
            restart: None,
            prompts: std::collections::VecDeque::new(),
        }
    }

    fn start_turn(&mut self, input: TurnInput) {
        self.generation += 1;
        let generation = self.generation;
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        let handle = tokio::spawn(async move {
            let events = tx.clone();
            let mut sink = move |event: TurnEvent| {
                let _ = events.send(Msg::Turn(generation, event));
            };
            let chat = chat.read().await;
            let Some(session) = chat.session() else {
                let _ = tx.send(Msg::TurnEnd(generation, Err(TurnFailed::NoModel)));
                return;
            };
            let result = session.turn(&input, &mut sink).await;
            let _ = tx.send(Msg::TurnEnd(
                generation,
                result.map(|o| o.restart).map_err(TurnFailed::Turn),
            ));
        });
        self.turn = Some((generation, handle));
    }

    fn start_background(&mut self, app: &mut App) {
        if self.background.as_ref().is_some_and(|h| !h.is_finished()) {
            // One background run at a time (`docs/behaviour.md#background-memory-work`): a due job
            // fires again next turn.
            return;
        }
        app.status.background = Some("memory and context work…".into());
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        self.background = Some(tokio::spawn(async move {
            let chat = chat.read().await;
            let Some(session) = chat.session() else {
                let _ = tx.send(Msg::BackgroundDone(Vec::new()));
                return;
            };
            let report = session.after_turn().await;
            let failures = report.failures.iter().map(ToString::to_string).collect();
            let _ = tx.send(Msg::BackgroundDone(failures));
            let _ = tx.send(Msg::Tokens(token_estimate(session)));
        }));
    }

    fn refresh(&mut self) {
        if self.loading {
            self.reload = true;
            return;
        }
        self.loading = true;
        let source = Arc::clone(&self.sidebar);
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::Sidebar(source.load()));
        });
    }

    fn poll_reminders(&self) {
        let source = Arc::clone(&self.reminders);
        let tx = self.tx.clone();
        let now = self.time.now();
        tokio::task::spawn_blocking(move || {
            let due: Vec<crate::app::Reminder> = source
                .take_due(now)
                .into_iter()
                .map(|a| crate::app::Reminder {
                    name: a.item.name.clone(),
                    text: a.body,
                    time: a.when,
                })
                .collect();
            if !due.is_empty() {
                let _ = tx.send(Msg::Reminders(due));
            }
        });
    }

    fn run_tool(&self, name: String, arguments: String, form: bool) {
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let chat = chat.read().await;
            let result = chat.runtime().call_tool(&name, Some(&arguments)).await;
            let _ = tx.send(Msg::Tool {
                name,
                arguments,
                content: result.content,
                is_error: result.is_error,
                form,
            });
        });
    }

    /// The token estimate and the completion names (models, memories), read in the background.
    fn load_names(&self) {
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let chat = chat.read().await;
            if let Some(session) = chat.session() {
                let _ = tx.send(Msg::Tokens(token_estimate(session)));
            }
            let _ = tx.send(Msg::Names(chat.completion_names()));
        });
    }

    /// Runs a `/…` command on the session (elroy-commands, no model request). It needs the
    /// session to itself, so it starts when the running turn and background work let go of it.
    fn run_command(&self, text: String) {
        let Input::Command(command) = elroy_commands::parse(&text) else {
            return;
        };
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        let help = command == elroy_commands::Command::Help;
        tokio::spawn(async move {
            let mut chat = chat.write().await;
            let output = elroy_commands::run(&command, &mut chat).await;
            let model = chat.model_name().unwrap_or(NO_MODEL).to_owned();
            let _ = tx.send(Msg::Command(output, model, help));
        });
    }

    /// The local-server search of a first run, in the background.
    fn search_servers(&self) {
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(Msg::Servers(elroy_commands::search_local_servers().await));
        });
    }

    /// Starts the session with the first-run choice and saves it; the session-context pair
    /// follows as at any session start.
    fn adopt(&self, choice: elroy_commands::ModelChoice) {
        let chat = Arc::clone(&self.chat);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut chat = chat.write().await;
            let result = elroy_commands::adopt_and_save(&mut chat, &choice).map(|lines| {
                if let Some(Err(e)) = chat.session().map(Session::add_session_context) {
                    tracing::warn!("could not add the session context: {e}");
                }
                (lines, chat.model_name().unwrap_or(NO_MODEL).to_owned())
            });
            let _ = tx.send(Msg::Adopted(result));
        });
    }
}

/// The status bar's model while there is none.
const NO_MODEL: &str = "no model";

fn token_estimate(session: &Session) -> usize {
    let parts = session.parts();
    parts
        .transcript
        .active_context(parts.user_id)
        .map(|context| {
            context
                .iter()
                .map(|m| elroy_transcript::estimate_tokens(&m.message))
                .sum()
        })
        .unwrap_or(0)
}

async fn event_loop(
    mut app: App,
    chat: ChatSession,
    mut term: Terminal_,
    mut signals: Signals,
) -> Result<Outcome, TuiError> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runtime = chat.runtime();
    // Memories lacking a vector of the configured embedding model: embedded in the
    // background, progress in the status bar, the end as a notice.
    let _embedding = {
        let tx = tx.clone();
        runtime.start_background_embedding(Arc::new(
            move |p: &elroy_runtime::reembed::EmbedProgress| {
                let _ = tx.send(Msg::Embedding(p.clone()));
            },
        ))
    };
    // The MCP servers (started with the session): status bar and palette follow them.
    let mcp_view = runtime
        .mcp
        .clone()
        .map(|mcp| (mcp, runtime.registry.clone()));
    let mut mcp_seen = String::new();
    // A model's call that needs approval is asked about in a prompt; refusals are a line in the
    // conversation.
    let gate = Arc::clone(&runtime.permissions);
    {
        let ask = tx.clone();
        gate.set_approver(Some(Arc::new(TuiApprover::new(Arc::new(
            move |request, reply| ask.send(Msg::Approval(request, reply)).is_ok(),
        )))));
        let refused = tx.clone();
        gate.set_notice_sink(Some(Arc::new(move |notice| {
            let _ = refused.send(Msg::Refused(notice.to_string()));
        })));
    }
    let mut lp = Loop::new(tx, chat);
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let reader = Reader::start(events_tx);
    lp.refresh();
    lp.load_names();
    if app.first_run.is_some() {
        lp.search_servers();
    }
    // A restart hands over a hidden resume message (`docs/behaviour.md#restarting-a-session`).
    if let Ok(resume) = std::env::var(RESUME_VARIABLE)
        && !resume.trim().is_empty()
    {
        app.turn_running = true;
        app.status.phase = Some("resuming…".into());
        lp.start_turn(TurnInput::hidden(resume));
    }
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut ticks: u64 = 0;
    // Drawn after every event and message; on a bare tick only while a spinner turns.
    let mut redraw = true;
    let mut ending: Option<Ending> = None;
    loop {
        lp.prompts.retain(|p| !p.is_stale());
        if redraw {
            draw(&mut term, &app, &lp)?;
        }
        redraw = true;
        let mut actions = Vec::new();
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => {
                    actions = on_input(&mut app, &mut lp.prompts, event);
                    // Everything already typed or pasted is handled before the next frame, so
                    // a held key or a burst never queues redraws.
                    while let Ok(event) = events.try_recv() {
                        actions.extend(on_input(&mut app, &mut lp.prompts, event));
                    }
                }
                None => break,
            },
            Some(msg) = rx.recv() => {
                actions = handle(&mut app, &mut lp, msg);
                // Batch what is already waiting (streamed tokens) before drawing again.
                while let Ok(msg) = rx.try_recv() {
                    actions.extend(handle(&mut app, &mut lp, msg));
                }
            }
            received = signals.recv() => match received {
                Received::End(signal) => {
                    ending = Some(signal);
                    break;
                }
                Received::Continued => term.reenter().map_err(TuiError::Terminal)?,
                Received::Resized => {
                    // ratatui's next draw takes the new size.
                    app.on_resize();
                }
            },
            _ = tick.tick() => {
                ticks += 1;
                redraw = on_tick(&mut app, &mut lp, ticks, mcp_view.as_ref(), &mut mcp_seen);
            }
        }
        let mut queue = std::collections::VecDeque::from(actions);
        while let Some(action) = queue.pop_front() {
            let mut screen = Screen {
                term: &mut term,
                reader: &reader,
            };
            perform(&mut app, &mut lp, &mut screen, action, &mut queue)?;
        }
        if app.quitting || lp.restart.is_some() {
            break;
        }
    }
    // Nothing reads the terminal after the interface (a restart's new elroy needs it).
    drop(reader);
    gate.set_approver(None);
    gate.set_notice_sink(None);
    Ok(wind_down(app, lp, term, ending).await)
}

/// Every 100 ms: the spinner turns, reminders are polled each second and the MCP servers'
/// state each half second. Whether the screen needs drawing.
fn on_tick(
    app: &mut App,
    lp: &mut Loop,
    ticks: u64,
    mcp_view: Option<&(McpClients, ToolRegistry)>,
    mcp_seen: &mut String,
) -> bool {
    app.status.tick = app.status.tick.wrapping_add(1);
    let mut redraw = app.status.phase.is_some() || app.status.background.is_some();
    if ticks.is_multiple_of(10) {
        lp.poll_reminders();
    }
    if let Some((mcp, registry)) = mcp_view
        && ticks.is_multiple_of(5)
        && crate::mcp_status::refresh(app, mcp, registry, mcp_seen)
    {
        redraw = true;
    }
    redraw
}

/// One frame: the interface, and the first approval prompt over it.
fn draw(term: &mut Terminal_, app: &App, lp: &Loop) -> Result<(), TuiError> {
    term.terminal
        .draw(|frame| {
            crate::ui::render(app, frame);
            if let Some(prompt) = lp.prompts.front() {
                crate::approval::render(prompt, &app.theme, frame, frame.area());
            }
        })
        .map(|_| ())
        .map_err(TuiError::Draw)
}

/// The terminal and its reader, which `$EDITOR` and a suspend take over for a while.
struct Screen<'a> {
    term: &'a mut Terminal_,
    reader: &'a Reader,
}

/// Does what the app asked for; actions that follow (a cancelled turn's end) go to `queue`.
fn perform(
    app: &mut App,
    lp: &mut Loop,
    screen: &mut Screen<'_>,
    action: Action,
    queue: &mut std::collections::VecDeque<Action>,
) -> Result<(), TuiError> {
    match action {
        Action::Send(text) => lp.start_turn(TurnInput::new(text)),
        Action::Proactive(text) => lp.start_turn(TurnInput::proactive(text)),
        Action::Cancel => {
            if let Some((_, handle)) = lp.turn.take() {
                handle.abort();
                app.on_turn_event(TurnEvent::Cancelled);
                queue.extend(app.on_turn_end());
            }
            // After the abort: a dropped prompt is a denial the turn must not act on.
            lp.prompts.clear();
        }
        Action::RunTool {
            name,
            arguments,
            form,
        } => lp.run_tool(name, arguments, form),
        Action::Command(text) => lp.run_command(text),
        Action::Refresh => lp.refresh(),
        Action::Edit(path) => {
            screen.reader.pause();
            screen.term.leave();
            let status = open_editor(&path);
            screen.term.resume().map_err(TuiError::Terminal)?;
            screen.reader.resume();
            if let Err(e) = status {
                app.notice(NoticeKind::Warning, e.to_string());
            }
            lp.refresh();
        }
        Action::Bell => {
            let _ = std::io::stdout().write_all(b"\x07");
            let _ = std::io::stdout().flush();
        }
        Action::Suspend => {
            screen.term.leave();
            crate::signals::suspend_self();
            // Running again (continued, or the stop was ignored): the SIGCONT handler
            // may set the terminal up once more, which only repaints.
            screen.term.reenter().map_err(TuiError::Terminal)?;
        }
        Action::UseModel(choice) => lp.adopt(choice),
        Action::Quit => app.quitting = true,
    }
    Ok(())
}

/// The end of the interface: the turn stopped, the terminal restored, background work after the
/// last reply waited for at most [`QUIT_WAIT`].
async fn wind_down(
    mut app: App,
    mut lp: Loop,
    mut term: Terminal_,
    ending: Option<Ending>,
) -> Outcome {
    lp.prompts.clear();
    if let Some((_, handle)) = lp.turn.take() {
        handle.abort();
    }
    // A signal: the terminal is restored at once (the window may be gone), then the wait.
    if ending.is_some() {
        term.leave();
    }
    let mut unfinished = None;
    if let Some(handle) = lp.background.take()
        && !handle.is_finished()
    {
        app.status.background = Some("finishing background work (at most 5 s)…".into());
        if ending.is_none() {
            let _ = term.terminal.draw(|frame| crate::ui::render(&app, frame));
        }
        if tokio::time::timeout(QUIT_WAIT, handle).await.is_err() {
            unfinished = Some(
                "the memory and context work after the last reply did not finish; it runs again after the next reply if still due",
            );
        }
    }
    drop(term);
    if let Some(text) = unfinished {
        elroy_runtime::output::eprintln(&format!("elroy: {text}"));
    }
    if let Some(signal) = ending {
        elroy_runtime::output::eprintln(&format!("elroy: ended by {}", signal.name()));
        return Outcome::Exit(signal.exit_code());
    }
    match lp.restart {
        Some(message) => Outcome::Restart(message),
        None => Outcome::Exit(ExitCode::SUCCESS),
    }
}

/// Runs `$VISUAL` / `$EDITOR` (default `vi`) on `path`, split into words like a shell would
/// (no shell runs), and waits for it.
fn open_editor(path: &std::path::Path) -> Result<(), EditorError> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into());
    let words = shlex::split(&editor)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| EditorError::Unreadable(editor.clone()))?;
    let status = tokio::task::block_in_place(|| {
        std::process::Command::new(&words[0])
            .args(&words[1..])
            .arg(path)
            .status()
    })
    .map_err(|source| EditorError::Spawn {
        program: words[0].clone(),
        source,
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(EditorError::Exited {
            program: words[0].clone(),
            status,
        })
    }
}
