//! The command line (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// elroy: a memory-augmented personal assistant for the terminal.
///
/// elroy remembers: long-term memories it recalls by itself, an agenda of dated items with
/// checklists, due items that fire on a time or a context, a backlog of feature requests, and two
/// notes files (MEMORY.md and USER.md) loaded at the start of every session. Every tool the model
/// can call, you can call too: see `elroy tools list`.
#[derive(Debug, Parser)]
#[command(name = "elroy", version, propagate_version = true, after_help = AFTER_HELP)]
pub struct Cli {
    /// The elroy home directory [env: ELROY_HOME; default: ~/.elroy]
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,

    /// Configuration file [env: ELROY_CONFIG_PATH; default: $ELROY_HOME/elroy.conf.yaml]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// User token: selects whose memories, agenda and notes are used [env: ELROY_USER_TOKEN;
    /// default: DEFAULT]
    #[arg(long, global = true, value_name = "TOKEN")]
    pub user: Option<String>,

    /// Chat model, e.g. gpt-5, sonnet, or a model of an OpenAI-compatible server
    /// [env: ELROY_CHAT_MODEL]
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Chat in the plain line REPL instead of the full-screen interface [config: ui: plain]
    #[arg(long, global = true)]
    pub plain: bool,

    /// MCP servers' configuration as Claude Desktop and Claude Code write it, {"mcpServers": {...}},
    /// merged over the mcp_servers key [env: ELROY_MCP_CONFIG_PATH; config: mcp_config_path]
    #[arg(long, global = true, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,

    /// What the model's tool calls may do unasked: ask (default: reading outside the current
    /// directory and the home, the network and programs ask first), read-only, or auto
    /// [env: ELROY_PERMISSION_MODE; config: permissions.mode] (docs/security.md)
    #[arg(long, global = true, value_name = "MODE")]
    pub permission_mode: Option<String>,

    /// Let the model's calls matching RULE run unasked, e.g. 'read_file(~/notes/**)',
    /// 'fetch_page(domain:en.wikipedia.org)', 'mcp__calendar__*' (repeatable; added to
    /// permissions.allow)
    #[arg(long, global = true, value_name = "RULE")]
    pub allow: Vec<String>,

    /// Refuse the model's calls matching RULE, e.g. 'web_search' (repeatable; added to
    /// permissions.deny)
    #[arg(long, global = true, value_name = "RULE")]
    pub deny: Vec<String>,

    /// Log more (to $ELROY_HOME/logs/elroy.log, never to stdout)
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// What to do
    #[command(subcommand)]
    pub command: Option<Command>,
}

const AFTER_HELP: &str = "\
Examples:
  elroy                                   chat (or: echo \"hi\" | elroy; --plain for the line REPL)
  elroy message \"Add an agenda item: water the plants\"
  elroy tools list
  elroy tools call add_agenda_item --args '{\"text\":\"Water the plants\"}'
  elroy tools call list_agenda_items
  elroy agenda week                       the agenda of the next seven days
  elroy due                               due items, soonest first
  elroy remind --watch                    announce each due item when it comes due
  elroy config

Reproducible runs: ELROY_NOW=2026-03-16T08:30:00Z fixes the clock; ELROY_TIMEZONE (or TZ) sets the zone.";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Interactive chat: the full-screen interface on a terminal, the line REPL with --plain (the default when standard input is a terminal)
    Chat,
    /// Send one message and print the reply; TEXT, or standard input when omitted
    Message(crate::commands::message::MessageArgs),
    /// Store a memory; TEXT, or standard input when omitted (name: --name, else the first line)
    Remember(crate::commands::remember::RememberArgs),
    /// Call a tool directly, list the tools, or show their schemas
    Tools(crate::commands::tools::ToolsArgs),
    /// The agenda of a day or a week: items with checklist progress and the latest update
    Agenda(crate::commands::agenda::AgendaArgs),
    /// The due items (timed, in time order, then contextual); snooze or complete one
    Due(crate::commands::due::DueArgs),
    /// Announce the due items whose time has passed, once each (--watch: keep running)
    Remind(crate::commands::remind::RemindArgs),
    /// Show the resolved configuration and where each value came from (secrets masked)
    Config(crate::commands::config::ConfigArgs),
    /// Serve every tool over the Model Context Protocol on stdin/stdout (for MCP clients such as Claude Desktop or Claude Code); `elroy mcp list` shows the MCP servers elroy itself uses
    Mcp(crate::commands::mcp::McpArgs),
    /// Import chat history as memories: ChatGPT or Claude.ai exports, Claude Code, Codex or Gemini CLI sessions (elroy: an Elroy home, as import-elroy)
    Import(crate::commands::import::ImportArgs),
    /// Serve elroy over HTTP: an OpenAI-compatible chat endpoint (/v1/chat/completions, /v1/models) and MCP (/mcp), behind bearer keys (ELROY_SERVE_KEY or serve.keys); see docs/serve.md
    Serve(crate::commands::serve::ServeArgs),
    /// Import an Elroy (Python) home: agenda, due items, feature requests, memories, and names from its database (the same as `elroy import elroy DIR`)
    ImportElroy(crate::commands::import_elroy::ImportElroyArgs),
    /// List the changes elroy and you made to the agenda, feature requests, memories and notes, newest first (the versioned home)
    History(crate::commands::history::HistoryArgs),
    /// Revert the last change elroy made to the markdown stores (refused when a file of it was edited by hand since)
    Undo,
    /// Sync this home with a git remote (another machine's changes in, this machine's out): commit, fetch, merge without conflict markers, push
    Sync(crate::commands::sync::SyncArgs),
    /// Check the whole home: every store and file (one line per problem: unreadable front matter, invalid UTF-8, ...), the database (integrity, migrations) and the versioned home (repository, unrecorded changes, conflict files); exits 1 when anything is wrong
    #[command(
        long_about = "Check the whole home and print one line per problem, then a summary.\n\nChecked: every agenda file, memory file (memories/ and memories/archive/), feature request, MEMORY.md and USER.md (unreadable, not UTF-8, front matter that does not parse); state.db (opens and migrates, PRAGMA integrity_check); and, when the home is versioned, the git repository (opens, its history reads), changes saved but not yet recorded (.git/elroy-pending.jsonl), sync-conflict or merge leftover files in the stores, and temporary files of writes that were interrupted (older than a minute). Plugins elroy does not run because they are not trusted as they are now (new, or changed since trusted; see `elroy plugins`) are listed too.\n\nOther commands read only the files they need and report a problem when they meet it (many similar problems as one summary line; all of them in the log); doctor lists them all. No file of yours is changed (the memory index in state.db is brought up to date with the memory files, so a memory edited in place is found by its new words). Exit status: 0 when no problem was found, 1 otherwise."
    )]
    Doctor(crate::commands::doctor::DoctorArgs),
    /// List the plugins (contrib/, contrib_tools_path, custom_tools_path) and whether elroy may run them; trust or untrust them (a new or changed plugin is never run until you trust it)
    Plugins(crate::commands::plugins::PluginsArgs),
    /// Download the built-in embedder's model (recall by meaning without an embeddings API)
    Models(crate::commands::models::ModelsArgs),
    /// Print the version
    Version,
    /// Print a shell completion script, e.g. `elroy completions bash > ~/.local/share/bash-completion/completions/elroy`
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}
