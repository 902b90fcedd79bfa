//! Running a command without the model.

use elroy_agenda::AgendaStore;
use elroy_core::{Message, UserId};
use elroy_history::VersionedHome;
use elroy_transcript::{ContextItem, TranscriptStore};
use serde_json::{Value, json};

use crate::parse::{Command, help_lines};
use crate::session::ChatSession;
use crate::views;

/// What the front end should do after a command (the engine already did the work).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Leave the interface (after waiting for background work, as on Ctrl-D).
    Exit,
    /// A new context was started: a full-screen front end clears its conversation pane.
    ClearContext,
    /// The chat model is now `name` for this session (status bar, banner).
    SwitchModel(String),
}

/// A command's result, front-end neutral.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Markdown lines to show (headings, `- ` lists, `` `code` ``); may be empty.
    pub lines: Vec<String>,
    /// The command failed (show the lines in the warning colour); nothing was changed.
    pub is_error: bool,
    /// What the front end should do next, if anything.
    pub action: Option<Action>,
}

impl CommandOutput {
    fn lines(lines: Vec<String>) -> Self {
        CommandOutput {
            lines: paragraphs(lines),
            ..CommandOutput::default()
        }
    }

    fn text(text: &str) -> Self {
        Self::lines(text.lines().map(str::to_owned).collect())
    }

    fn error(text: &str) -> Self {
        CommandOutput {
            is_error: true,
            ..Self::text(text)
        }
    }

    fn with_action(mut self, action: Action) -> Self {
        self.action = Some(action);
        self
    }
}

/// `lines` with a blank line wherever a sentence follows a list, so markdown does not read the
/// sentence as the last item's continuation (the hint after `/help`'s, `/memories`' and
/// `/model`'s lists was swallowed by their last bullet).
fn paragraphs(lines: Vec<String>) -> Vec<String> {
    let is_item = |l: &str| {
        let t = l.trim_start();
        t.starts_with("- ")
            || t.starts_with("* ")
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 2);
    for line in lines {
        if let Some(prev) = out.last()
            && is_item(prev)
            && !line.trim().is_empty()
            && !is_item(&line)
            && !line.starts_with(' ')
        {
            out.push(String::new());
        }
        out.push(line);
    }
    out
}

/// A memory search's result as a person reads it: `## Memory: NAME` headings as the name, and
/// the model's pointer to the memory's sources (`get_source_content_for_memory(memory_name=…,
/// index=0..2)`, a call for the model to make) as the number of sources.
fn memories_for_a_person(text: &str) -> String {
    text.lines()
        .map(|line| {
            if let Some(name) = line.strip_prefix("## Memory: ") {
                return format!("## {name}");
            }
            if let Some(call) = line
                .strip_prefix("*Source content: get_source_content_for_memory(")
                .and_then(|rest| rest.strip_suffix(")*"))
            {
                let n = call
                    .rsplit_once("index=")
                    .map(|(_, range)| match range.split_once("..") {
                        Some((_, last)) => last.trim().parse::<usize>().map_or(1, |l| l + 1),
                        None => 1,
                    })
                    .unwrap_or(1);
                return if n == 1 {
                    "*From 1 source.*".to_owned()
                } else {
                    format!("*From {n} sources.*")
                };
            }
            line.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many changes `/history` lists.
pub const HISTORY_LINES: usize = 15;

/// The longest default name of a memory stored by `/remember` or `elroy remember`, in characters
/// (`DESIGN.md`, the CLI table).
pub const DEFAULT_NAME_CHARS: usize = 60;

/// Runs `command` on `chat` without any chat-model request:
///
/// - `/help`: the command list;
/// - `/agenda [DAYS]`: the agenda items of DAYS ([`views::Days`]: `today`, `tomorrow`,
///   `yesterday`, `week` or `YYYY-MM-DD`, default today), one line per item with checklist
///   progress ([`views::agenda_days`]);
/// - `/due`: [`views::due_list`]: timed items by trigger time ([`views::due_time`], and how far
///   away or overdue), then contextual ones;
/// - `/memories [QUESTION]`: `examine_memories` for QUESTION (its recall may embed the question
///   when embeddings are configured), else the active memories' names;
/// - `/remember TEXT`: `create_memory` named after TEXT's first line (as `elroy remember`);
/// - `/requests`: `list_feature_requests`; `/tools`: the registry;
/// - `/history`: the last [`HISTORY_LINES`] changes of the versioned home; `/undo`: reverts the
///   last one (as `elroy undo`);
/// - `/model [NAME]`: shows the model, or switches to NAME ([`ChatSession::switch_model`],
///   [`Action::SwitchModel`]);
/// - `/clear`: a new context — the system prompt and a fresh session-context pair, one
///   transcript version with reason `clear` ([`Action::ClearContext`]); the messages stay in
///   the transcript;
/// - `/exit`: [`Action::Exit`].
///
/// Tools are called as direct calls through the runtime ([`elroy_runtime::Runtime::call_tool`]):
/// validated as a model's call, recorded in the versioned home, effects applied to the active
/// context. A failure is an output with `is_error` and the tool's or store's message.
pub async fn run(command: &Command, chat: &mut ChatSession) -> CommandOutput {
    match command {
        Command::Help => {
            let mut lines = vec!["Commands:".to_owned()];
            lines.extend(help_lines());
            lines.push(
                "Anything else is sent to the model; start with `//` to send a message that begins with `/`."
                    .to_owned(),
            );
            CommandOutput::lines(lines)
        }
        Command::Agenda(date) => agenda(chat, date.as_deref()),
        Command::Due => due(chat),
        Command::Memories(None) => memory_names(chat),
        Command::Memories(Some(question)) => {
            let mut out = tool(chat, "examine_memories", &json!({ "question": question })).await;
            if !out.is_error {
                out = CommandOutput::text(&memories_for_a_person(&out.lines.join("\n")));
            }
            out
        }
        Command::Remember(None) => CommandOutput::error("Usage: /remember TEXT"),
        Command::Remember(Some(text)) => {
            let name = default_memory_name(text);
            tool(
                chat,
                "create_memory",
                &json!({ "name": name, "text": text }),
            )
            .await
        }
        Command::Requests => tool(chat, "list_feature_requests", &json!({})).await,
        Command::History => history(chat),
        Command::Undo => undo(chat),
        Command::Model(None) => {
            let Some(model) = chat.model_name() else {
                return CommandOutput::lines(vec![
                    "No chat model yet.".to_owned(),
                    "Pick one for this session with `/model NAME` (e.g. `/model sonnet` with ANTHROPIC_API_KEY set), or choose a local server or paste a key where elroy offers them.".to_owned(),
                ]);
            };
            let mut lines = vec![format!("Chat model: `{model}`")];
            if chat.model_override().is_some() {
                lines.push("(switched with /model for this session)".to_owned());
            }
            lines.push("Switch for this session with `/model NAME` (e.g. `/model sonnet`).".into());
            CommandOutput::lines(lines)
        }
        Command::Model(Some(name)) => match chat.switch_model(name) {
            Ok(base) => {
                let model = chat.model_name().unwrap_or(name).to_owned();
                let mut lines = vec![format!("Chat model for this session: `{model}`")];
                lines.extend(base.map(|line| format!("\n{line}")));
                CommandOutput::text(&lines.join("\n")).with_action(Action::SwitchModel(model))
            }
            Err(e) => CommandOutput::error(&format!("Cannot switch to {name}: {e}")),
        },
        Command::Tools => tools(chat),
        Command::Clear => clear(chat),
        Command::Exit => CommandOutput::default().with_action(Action::Exit),
    }
}

/// A direct tool call; its text as the output.
async fn tool(chat: &ChatSession, name: &str, arguments: &Value) -> CommandOutput {
    let result = chat
        .runtime()
        .call_tool(name, Some(&arguments.to_string()))
        .await;
    if result.is_error {
        CommandOutput::error(&result.content)
    } else {
        CommandOutput::text(&result.content)
    }
}

/// The agenda store of `chat`'s home, or the output saying why there is none.
fn agenda_store(chat: &ChatSession) -> Result<std::sync::Arc<AgendaStore>, CommandOutput> {
    match chat.runtime().services.try_get::<AgendaStore>() {
        Ok(Some(store)) => Ok(store),
        Ok(None) => Err(CommandOutput::error("The agenda store is not available.")),
        Err(e) => Err(CommandOutput::error(&e.to_string())),
    }
}

/// `/agenda [DAYS]`: [`views::agenda_days`] as markdown, one line per item with its checklist
/// progress and the first line of its text when that says more than the title.
fn agenda(chat: &ChatSession, word: Option<&str>) -> CommandOutput {
    let days = match views::Days::parse(word, chat.runtime().time.today()) {
        Ok(days) => days,
        Err(e) => return CommandOutput::error(&e.to_string()),
    };
    let store = match agenda_store(chat) {
        Ok(store) => store,
        Err(out) => return out,
    };
    let listing = match views::agenda_days(&store, days) {
        Ok(listing) => listing,
        Err(e) => return CommandOutput::error(&e.to_string()),
    };
    if listing.entries.is_empty() {
        return CommandOutput::text(&format!("No agenda items for {}.", days.describe()));
    }
    let mut lines = vec![format!("**Agenda for {}**", days.describe())];
    for entry in &listing.entries {
        let day = if days.first == days.last {
            String::new()
        } else {
            format!("{} ", entry.date)
        };
        let progress = entry
            .progress
            .map(|(done, total)| format!(" ({done}/{total})"))
            .unwrap_or_default();
        let note = entry
            .note()
            .map(|note| format!(" — {note}"))
            .unwrap_or_default();
        lines.push(format!("- {day}**{}**{progress}{note}", entry.title()));
    }
    CommandOutput::lines(lines)
}

/// `/due`: [`views::due_list`] as markdown: `- **NAME** (WHEN, RELATIVE) — TEXT` for timed
/// items, `- **NAME** (when: CONTEXT) — TEXT` for the others.
fn due(chat: &ChatSession) -> CommandOutput {
    let store = match agenda_store(chat) {
        Ok(store) => store,
        Err(out) => return out,
    };
    let list = match views::due_list(&store, &chat.runtime().time) {
        Ok(list) => list,
        Err(e) => return CommandOutput::error(&e.to_string()),
    };
    if list.is_empty() {
        return CommandOutput::text("No due items.");
    }
    let text = |summary: &str| {
        if summary.is_empty() {
            String::new()
        } else {
            format!(" — {summary}")
        }
    };
    let mut lines = vec!["**Due items**".to_owned()];
    for timed in &list.timed {
        let repeats = timed
            .repeats
            .as_ref()
            .map(|rule| format!(", {rule}"))
            .unwrap_or_default();
        lines.push(format!(
            "- **{}** ({}, {}{repeats}){}",
            views::one_line(&timed.item.name),
            timed.when,
            timed.relative,
            text(&timed.summary)
        ));
    }
    for other in &list.contextual {
        let when = if other.context.is_empty() {
            String::new()
        } else {
            format!(" (when: {})", other.context)
        };
        lines.push(format!(
            "- **{}**{when}{}",
            views::one_line(&other.item.name),
            text(&other.summary)
        ));
    }
    CommandOutput::lines(lines)
}

fn memory_names(chat: &ChatSession) -> CommandOutput {
    let store = match chat
        .runtime()
        .services
        .try_get::<elroy_memory::MemoryStore>()
    {
        Ok(Some(store)) => store,
        Ok(None) => return CommandOutput::error("The memory store is not available."),
        Err(e) => return CommandOutput::error(&e.to_string()),
    };
    match store.active_names() {
        Ok(names) if names.is_empty() => {
            CommandOutput::text("No memories yet. Store one with `/remember TEXT`.")
        }
        Ok(names) => {
            let mut lines = vec![format!("**Memories ({})**", names.len())];
            lines.extend(names.iter().map(|n| format!("- {n}")));
            lines.push("Search them with `/memories QUESTION`.".to_owned());
            CommandOutput::lines(lines)
        }
        Err(e) => CommandOutput::error(&e.to_string()),
    }
}

fn versioned_home(chat: &ChatSession) -> Result<VersionedHome, CommandOutput> {
    let now = chat.runtime().time.now();
    match elroy_runtime::versioned::open_for_history(&chat.runtime().config, now) {
        Ok((home, failed)) => {
            if let Some(e) = failed {
                tracing::warn!("versioned home: {e}");
            }
            Ok(home)
        }
        Err(elroy_runtime::versioned::HistoryOpenError::Off) => Err(CommandOutput::error(
            "The versioned home is off (versioned_home: false), so there is no history.",
        )),
        Err(e) => Err(CommandOutput::error(&e.to_string())),
    }
}

fn history(chat: &ChatSession) -> CommandOutput {
    let home = match versioned_home(chat) {
        Ok(home) => home,
        Err(output) => return output,
    };
    // The newest few, and how many there are: commits only, no tree diff per change (a diff
    // each is minutes at 10,000 commits of a 110,000-file home).
    let mut changes = Vec::new();
    let mut total = 0usize;
    let walked = home.walk_summaries(None, &mut |change| {
        total += 1;
        if changes.len() < HISTORY_LINES {
            changes.push(change);
        }
        true
    });
    if let Err(e) = walked {
        return CommandOutput::error(&e.to_string());
    }
    if changes.is_empty() {
        return CommandOutput::text("No changes yet.");
    }
    let tz = chat.runtime().time.tz.clone();
    let mut lines = vec!["**Latest changes** (newest first; `/undo` reverts the first)".to_owned()];
    for change in changes.iter().take(HISTORY_LINES) {
        lines.push(format!(
            "- `{}` {} {}",
            change.short_id,
            change
                .time
                .to_zoned_datetime(tz.clone())
                .strftime("%Y-%m-%d %H:%M"),
            change.summary
        ));
    }
    if total > HISTORY_LINES {
        lines.push(format!("… {} more: `elroy history`", total - HISTORY_LINES));
    }
    CommandOutput::lines(lines)
}

fn undo(chat: &ChatSession) -> CommandOutput {
    let home = match versioned_home(chat) {
        Ok(home) => home,
        Err(output) => return output,
    };
    match home.undo(chat.runtime().time.now()) {
        Ok(undone) => {
            let mut lines = vec![format!(
                "Undid {} (`{}`) as `{}`",
                undone.original.summary, undone.original.short_id, undone.commit.short_id
            )];
            for path in &undone.original.paths {
                let verb = if home.root().join(path).exists() {
                    "restored"
                } else {
                    "removed"
                };
                lines.push(format!("- {verb} {path}"));
            }
            CommandOutput::lines(lines)
        }
        Err(e) => CommandOutput::error(&e.to_string()),
    }
}

fn tools(chat: &ChatSession) -> CommandOutput {
    // The MCP servers' tools ready now too.
    let registry = &chat.runtime().registry.snapshot();
    let mut lines = vec![format!("**Tools ({})**", registry.len())];
    for spec in registry.specs() {
        let first = spec.description.lines().next().unwrap_or_default().trim();
        lines.push(format!("- `{}` — {first}", spec.name));
    }
    lines.push("Call one yourself with `elroy tools call NAME --args JSON`.".to_owned());
    CommandOutput::lines(lines)
}

/// A new context: the system prompt alone, then the session-context pair
/// (`docs/behaviour.md#the-session-context-pair`).
fn clear(chat: &ChatSession) -> CommandOutput {
    let runtime = chat.runtime();
    let services = &runtime.services;
    let (transcript, user) = match (
        services.try_get::<TranscriptStore>(),
        services.try_get::<UserId>(),
    ) {
        (Ok(Some(t)), Ok(Some(u))) => (t, u),
        (Err(e), _) | (_, Err(e)) => return CommandOutput::error(&e.to_string()),
        _ => return CommandOutput::error("The transcript is not available."),
    };
    let Some(session) = chat.session() else {
        return CommandOutput::error("There is no conversation to clear: no chat model yet.");
    };
    let system = ContextItem::New(Message::system(session.system_prompt().to_owned()));
    if let Err(e) = transcript.set_context(user.0, "clear", runtime.time.now(), &[system]) {
        return CommandOutput::error(&e.to_string());
    }
    if let Err(e) = session.add_session_context() {
        return CommandOutput::error(&e.to_string());
    }
    CommandOutput::text("Started a new context. The conversation so far stays in the transcript.")
        .with_action(Action::ClearContext)
}

/// The default name of a memory stored by `/remember` or `elroy remember`: the first non-blank
/// line of `text`, trimmed, cut to [`DEFAULT_NAME_CHARS`] characters.
pub fn default_memory_name(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .chars()
        .take(DEFAULT_NAME_CHARS)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::parse::{Input, parse};
    use elroy_core::Capabilities;
    use elroy_testkit::{MockServer, TempHome};

    #[test]
    fn default_memory_names() {
        assert_eq!(default_memory_name("Buy milk\nand eggs"), "Buy milk");
        assert_eq!(
            default_memory_name("\n  \n  Dentist on Friday  \nmore"),
            "Dentist on Friday"
        );
        let long = "é".repeat(70);
        assert_eq!(default_memory_name(&long).chars().count(), 60);
        assert_eq!(default_memory_name(""), "");
    }

    fn open(home: &TempHome) -> ChatSession {
        let options = elroy_config::LoadOptions {
            home: Some(home.path().to_path_buf()),
            cwd: home.path().to_path_buf(),
            user_dir: Some(home.path().to_path_buf()),
            env: [
                ("ELROY_NOW".to_owned(), "2026-12-01T09:30:00Z".to_owned()),
                ("TZ".to_owned(), "UTC0".to_owned()),
            ]
            .into_iter()
            .collect(),
            ..elroy_config::LoadOptions::default()
        };
        let config = elroy_config::Config::load(&options).unwrap();
        ChatSession::open(
            config,
            Capabilities { can_restart: false },
            elroy_runtime::logged_warnings(),
        )
        .unwrap()
    }

    async fn typed(chat: &mut ChatSession, line: &str) -> CommandOutput {
        match parse(line) {
            Input::Command(command) => run(&command, chat).await,
            other => panic!("{line:?} is not a command: {other:?}"),
        }
    }

    /// Every command runs without the model: the mock server sees no request at all, and the
    /// changes (`/remember`) are in the history and reverted by `/undo`.
    #[tokio::test]
    async fn commands_make_no_model_request() {
        let server = MockServer::start();
        let home = TempHome::with_model(&server.base_url());
        let mut chat = open(&home);
        let rt = chat.runtime();
        let added = rt
            .call_tool("add_agenda_item", Some(r#"{"text":"Water the plants"}"#))
            .await;
        assert!(!added.is_error, "{}", added.content);
        let due = rt
            .call_tool(
                "create_due_item",
                Some(r#"{"name":"Dentist","text":"Call the dentist","trigger_time":"in 30 minutes"}"#),
            )
            .await;
        assert!(!due.is_error, "{}", due.content);
        let ctx_due = rt
            .call_tool(
                "create_due_item",
                Some(r#"{"name":"Tea","text":"Buy tea","trigger_context":"at the shop"}"#),
            )
            .await;
        assert!(!ctx_due.is_error, "{}", ctx_due.content);

        let agenda = typed(&mut chat, "/agenda").await;
        assert!(!agenda.is_error, "{agenda:?}");
        assert_eq!(agenda.lines[0], "**Agenda for 2026-12-01**");
        // The name a person wrote, not the file stem (`Plan_the_trip_to_Lisbon (0/2)
        // — Plan the trip to Lisbon`).
        assert_eq!(agenda.lines[1], "- **Water the plants**", "{agenda:?}");
        let tomorrow = typed(&mut chat, "/agenda tomorrow").await;
        assert_eq!(tomorrow.lines, ["No agenda items for 2026-12-02."]);
        let bad = typed(&mut chat, "/agenda someday").await;
        assert!(bad.is_error, "{bad:?}");

        let due = typed(&mut chat, "/due").await;
        assert_eq!(due.lines.len(), 3, "{due:?}");
        assert!(
            due.lines[1].starts_with("- **Dentist** (Tue 2026-12-01 10:00 +00:00, in 30 min)"),
            "{due:?}"
        );
        assert!(
            due.lines[2].contains("Tea") && due.lines[2].contains("at the shop"),
            "{due:?}"
        );

        let remembered = typed(&mut chat, "/remember Favourite tea is oolong").await;
        assert!(!remembered.is_error, "{remembered:?}");
        let names = typed(&mut chat, "/memories").await;
        assert!(
            names.lines.iter().any(|l| l == "- Favourite tea is oolong"),
            "{names:?}"
        );
        let found = typed(&mut chat, "/memories which tea do I like").await;
        assert!(!found.is_error, "{found:?}");
        assert!(
            found.lines.iter().any(|l| l.contains("oolong")),
            "{found:?}"
        );
        assert!(
            !found.lines.iter().any(|l| l.contains("get_source_content_for_memory")
                || l.starts_with("## Memory:")),
            "{found:?}"
        );

        let history = typed(&mut chat, "/history").await;
        assert!(history.lines[1].contains("create_memory"), "{history:?}");
        let undone = typed(&mut chat, "/undo").await;
        assert!(!undone.is_error, "{undone:?}");
        assert!(
            undone.lines[0].starts_with("Undid create_memory"),
            "{undone:?}"
        );

        for line in ["/help", "/tools", "/requests", "/model", "/remember"] {
            let out = typed(&mut chat, line).await;
            assert!(!out.lines.is_empty(), "{line}: {out:?}");
        }
        // The sentence after a list is its own paragraph: `/help` (a reported case) and
        // `/memories` (another list with a hint after it).
        for line in ["/help", "/memories"] {
            let out = typed(&mut chat, line).await;
            let last_item = out.lines.iter().rposition(|l| l.starts_with("- ")).unwrap();
            assert_eq!(out.lines[last_item + 1], "", "{line}: {out:?}");
        }
        assert!(typed(&mut chat, "/remember").await.is_error);
        assert_eq!(typed(&mut chat, "/exit").await.action, Some(Action::Exit));
        assert!(server.requests().is_empty(), "{:?}", server.requests());
    }

    /// `/clear` leaves the system prompt and a fresh session-context pair; `/model NAME`
    /// switches the session's model without a request.
    #[tokio::test]
    async fn clear_and_model_switch() {
        let server = MockServer::start();
        let home = TempHome::with_model(&server.base_url());
        let mut chat = open(&home);
        chat.session().unwrap().add_session_context().unwrap();
        chat.session().unwrap().add_session_context().unwrap();
        let cleared = typed(&mut chat, "/clear").await;
        assert_eq!(cleared.action, Some(Action::ClearContext), "{cleared:?}");
        let services = &chat.runtime().services;
        let transcript = services.try_get::<TranscriptStore>().unwrap().unwrap();
        let user = services.try_get::<UserId>().unwrap().unwrap();
        let context = transcript.active_context(user.0).unwrap();
        assert_eq!(context.len(), 3, "{context:?}");
        assert_eq!(context[0].message.role, elroy_core::Role::System);

        assert_eq!(chat.model_name(), Some("testkit-model"));
        let switched = typed(&mut chat, "/model other-model").await;
        assert_eq!(
            switched.action,
            Some(Action::SwitchModel("other-model".into())),
            "{switched:?}"
        );
        assert_eq!(chat.model_name(), Some("other-model"));
        assert_eq!(chat.model_override(), Some("other-model"));
        // A model of the same provider goes to the configured base URL, and says so.
        let base = server.base_url();
        assert!(
            switched
                .lines
                .iter()
                .any(|l| l.contains("chat_model_api_base stays")
                    && l.contains(base.trim_end_matches('/'))),
            "{switched:?}"
        );
        // One of another provider does not inherit the local base URL (`/model
        // sonnet` after a local model failed with a bare 404): without a key it says which is
        // missing; with one it says whose address it uses. Cases: `sonnet` (an alias) and
        // `gemini/gemini-2.0-flash` (another provider).
        for name in ["sonnet", "gemini/gemini-2.0-flash"] {
            let other = typed(&mut chat, &format!("/model {name}")).await;
            let text = other.lines.join("\n");
            if other.is_error {
                assert!(text.contains("_API_KEY"), "{name}: {text}");
            } else {
                assert!(
                    text.contains("is for OpenAI-compatible models"),
                    "{name}: {text}"
                );
            }
        }
        assert!(server.requests().is_empty());
    }
}
