//! Parsing a typed line into a message for the model or an interface command.

/// One interface command as `/help` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// The name without the slash (`agenda`).
    pub name: &'static str,
    /// The argument, as shown in the help (`[DATE]`, `TEXT`), or `""`.
    pub usage: &'static str,
    /// One line of help.
    pub help: &'static str,
}

impl CommandInfo {
    /// `/name USAGE` (`/agenda [DATE]`).
    pub fn synopsis(&self) -> String {
        if self.usage.is_empty() {
            format!("/{}", self.name)
        } else {
            format!("/{} {}", self.name, self.usage)
        }
    }
}

/// Every interface command, in the order `/help` lists them.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        name: "help",
        usage: "",
        help: "list these commands",
    },
    CommandInfo {
        name: "agenda",
        usage: "[DATE]",
        help: "the agenda of a day or a week (today, tomorrow, yesterday, week or YYYY-MM-DD; default today)",
    },
    CommandInfo {
        name: "due",
        usage: "",
        help: "the due items: timed ones by time, then contextual ones",
    },
    CommandInfo {
        name: "memories",
        usage: "[QUESTION]",
        help: "search the memories for QUESTION, or list the memories' names",
    },
    CommandInfo {
        name: "remember",
        usage: "TEXT",
        help: "store TEXT as a memory (named after its first line)",
    },
    CommandInfo {
        name: "requests",
        usage: "",
        help: "the feature requests with their status",
    },
    CommandInfo {
        name: "history",
        usage: "",
        help: "the latest changes to the agenda, memories, requests and notes",
    },
    CommandInfo {
        name: "undo",
        usage: "",
        help: "revert the last change elroy made",
    },
    CommandInfo {
        name: "model",
        usage: "[NAME]",
        help: "show the chat model, or switch to NAME for this session",
    },
    CommandInfo {
        name: "tools",
        usage: "",
        help: "list the tools the model (and the command palette) can call",
    },
    CommandInfo {
        name: "clear",
        usage: "",
        help: "start a new context (the conversation so far stays in the transcript)",
    },
    CommandInfo {
        name: "exit",
        usage: "",
        help: "leave elroy (also Ctrl-D)",
    },
];

/// An interface command with its argument (trimmed; `None` when absent or blank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/help`.
    Help,
    /// `/agenda [DATE]`.
    Agenda(Option<String>),
    /// `/due`.
    Due,
    /// `/memories [QUESTION]`.
    Memories(Option<String>),
    /// `/remember TEXT` (`None`: no text given, answered with the usage).
    Remember(Option<String>),
    /// `/requests`.
    Requests,
    /// `/history`.
    History,
    /// `/undo`.
    Undo,
    /// `/model [NAME]`.
    Model(Option<String>),
    /// `/tools`.
    Tools,
    /// `/clear`.
    Clear,
    /// `/exit` (also `/quit`, and the bare words `exit` and `quit`).
    Exit,
}

impl Command {
    /// Whether the command changes the context, the memories or the session and so must wait
    /// for the background work after the last reply (`/remember`, `/undo`, `/clear`, `/model
    /// NAME`); the others only read and run at once, while that work goes on. `/exit` waits in
    /// its own way (at most 5 s, see the front ends).
    pub fn waits_for_background(&self) -> bool {
        matches!(
            self,
            Command::Remember(_) | Command::Undo | Command::Clear | Command::Model(Some(_))
        )
    }
}

/// What a typed line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Only whitespace: nothing to do.
    Empty,
    /// A message for the model, as it should be sent (`//text` already unescaped to `/text`).
    NotCommand(String),
    /// An interface command.
    Command(Command),
    /// `/word` that names no command (`word` without the slash); nothing goes to the model.
    Unknown {
        /// The word typed after the slash.
        word: String,
    },
    /// A command given an argument it does not take (`/due done X`): nothing runs and nothing
    /// goes to the model; `message` says why.
    Invalid {
        /// One line for the person.
        message: String,
    },
}

/// Parses one typed line (it may contain newlines: only a leading `/` on the first
/// non-blank character makes a command).
///
/// - blank → [`Input::Empty`];
/// - `//text` → [`Input::NotCommand`] with `/text` (the escape for a message starting with `/`);
/// - `/name ARG` → [`Input::Command`] (the name is case-insensitive; `/quit` is `/exit`);
/// - `/other` → [`Input::Unknown`];
/// - `exit` or `quit` alone → [`Command::Exit`] (as the chat always accepted);
/// - anything else → [`Input::NotCommand`] with the line unchanged.
pub fn parse(line: &str) -> Input {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if matches!(trimmed, "exit" | "quit") {
        return Input::Command(Command::Exit);
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Input::NotCommand(line.to_owned());
    };
    if rest.starts_with('/') {
        // `//text` sends `/text`: drop the first slash of the line as typed.
        let start = line.find('/').unwrap_or(0);
        let mut text = line.to_owned();
        text.remove(start);
        return Input::NotCommand(text);
    }
    let (word, argument) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    let takes_no_argument = COMMANDS
        .iter()
        .any(|c| c.name == word.to_lowercase() && c.usage.is_empty());
    if !argument.is_empty() && takes_no_argument {
        let hint = if word.eq_ignore_ascii_case("due") {
            " To complete or snooze a due item, ask the assistant, or run `elroy due done NAME` / \
             `elroy due snooze NAME WHEN` in a shell."
        } else {
            ""
        };
        return Input::Invalid {
            message: format!(
                "/{} takes no argument (got `{argument}`).{hint}",
                word.to_lowercase()
            ),
        };
    }
    let argument = (!argument.is_empty()).then(|| argument.to_owned());
    let command = match word.to_lowercase().as_str() {
        "help" | "?" => Command::Help,
        "agenda" => Command::Agenda(argument),
        "due" => Command::Due,
        "memories" => Command::Memories(argument),
        "remember" => Command::Remember(argument),
        "requests" => Command::Requests,
        "history" => Command::History,
        "undo" => Command::Undo,
        "model" => Command::Model(argument),
        "tools" => Command::Tools,
        "clear" => Command::Clear,
        "exit" | "quit" => Command::Exit,
        _ => {
            return Input::Unknown {
                word: word.to_owned(),
            };
        }
    };
    Input::Command(command)
}

/// The answer to an unknown `/word`: `Unknown command /word.`, the command list, and how to send
/// a message starting with `/`.
pub fn unknown_message(word: &str) -> Vec<String> {
    let mut lines = vec![format!("Unknown command /{word}. The commands are:")];
    lines.extend(help_lines());
    lines.push("To send a message that starts with `/` to the model, type `//`.".to_owned());
    lines
}

/// One markdown list line per command: `` - `/agenda [DATE]` — the agenda of a day … ``.
pub(crate) fn help_lines() -> Vec<String> {
    COMMANDS
        .iter()
        .map(|c| format!("- `{}` — {}", c.synopsis(), c.help))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_arguments() {
        assert_eq!(parse("/help"), Input::Command(Command::Help));
        // A command that takes no argument refuses one instead of ignoring it (`/due done X`
        // listed the due items and completed nothing).
        let Input::Invalid { message } = parse("/due done Dentist") else {
            panic!("not refused")
        };
        assert!(
            message.starts_with("/due takes no argument (got `done Dentist`)."),
            "{message}"
        );
        assert!(matches!(parse("/undo everything"), Input::Invalid { .. }));
        assert_eq!(parse("/due"), Input::Command(Command::Due));
        assert_eq!(parse("  /HELP  "), Input::Command(Command::Help));
        assert_eq!(parse("/agenda"), Input::Command(Command::Agenda(None)));
        assert_eq!(
            parse("/agenda 2026-12-02"),
            Input::Command(Command::Agenda(Some("2026-12-02".into())))
        );
        assert_eq!(
            parse("/remember  buy milk \n and eggs "),
            Input::Command(Command::Remember(Some("buy milk \n and eggs".into())))
        );
        assert_eq!(
            parse("/remember   "),
            Input::Command(Command::Remember(None))
        );
        assert_eq!(
            parse("/model sonnet"),
            Input::Command(Command::Model(Some("sonnet".into())))
        );
        assert_eq!(parse("/quit"), Input::Command(Command::Exit));
        assert_eq!(parse("exit"), Input::Command(Command::Exit));
        // Every listed command parses to a command.
        for info in COMMANDS {
            assert!(
                matches!(parse(&format!("/{}", info.name)), Input::Command(_)),
                "{info:?}"
            );
        }
    }

    #[test]
    fn messages_and_the_double_slash_escape() {
        assert_eq!(parse(""), Input::Empty);
        assert_eq!(parse("  \n "), Input::Empty);
        assert_eq!(
            parse("hello /help"),
            Input::NotCommand("hello /help".into())
        );
        assert_eq!(parse("exit now"), Input::NotCommand("exit now".into()));
        assert_eq!(parse("//help me"), Input::NotCommand("/help me".into()));
        assert_eq!(parse("  //x"), Input::NotCommand("  /x".into()));
        assert_eq!(parse("///"), Input::NotCommand("//".into()));
    }

    #[test]
    fn unknown_words_list_the_commands() {
        assert_eq!(
            parse("/nope"),
            Input::Unknown {
                word: "nope".into()
            }
        );
        assert_eq!(
            parse("/ x"),
            Input::Unknown {
                word: String::new()
            }
        );
        assert_eq!(
            parse("/agendas"),
            Input::Unknown {
                word: "agendas".into()
            }
        );
        let message = unknown_message("nope");
        assert_eq!(message[0], "Unknown command /nope. The commands are:");
        for info in COMMANDS {
            assert!(
                message.iter().any(|l| l.contains(&info.synopsis())),
                "{info:?} missing from {message:?}"
            );
        }
    }
}
