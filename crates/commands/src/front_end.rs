//! Which interface `elroy` and `elroy chat` open: the full-screen interface (elroy-tui) or the
//! line chat (elroy-chat), from `--plain`, the `ui` key and whether standard input and output are
//! terminals. The command line starts the one chosen.

/// Whether `TERM` names no terminal able to draw a screen (`dumb`, empty or unset), as every
/// curses program decides.
pub fn dumb_terminal() -> bool {
    std::env::var("TERM").map_or(true, |t| t.trim().is_empty() || t.trim() == "dumb")
}

/// The interface `elroy` and `elroy chat` open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// The full-screen interface (standard input and output are terminals, no `--plain`, `ui`
    /// is not `plain`).
    FullScreen,
    /// The line REPL (`--plain` or `ui: plain` on a terminal; standard output not a terminal).
    Plain,
    /// The line REPL because the terminal cannot show the full-screen interface (`TERM` is
    /// `dumb`, empty or unset); elroy says so in one line.
    DumbTerminal,
    /// Standard input is not a terminal: `elroy` reads one message from it, `elroy chat` reads
    /// its lines with the line REPL (as before the full-screen interface).
    NonInteractive,
}

/// Whether standard input and standard output are terminals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminals {
    /// Standard input is a terminal.
    pub stdin: bool,
    /// Standard output is a terminal.
    pub stdout: bool,
    /// `TERM` is `dumb`, empty or unset: a terminal without cursor addressing.
    pub dumb: bool,
}

/// The terminals of this process now.
pub fn terminals() -> Terminals {
    use std::io::IsTerminal;
    Terminals {
        stdin: std::io::stdin().is_terminal(),
        stdout: std::io::stdout().is_terminal(),
        dumb: dumb_terminal(),
    }
}

/// The one place that decides the interface: `plain_flag` is `--plain`, `ui`
/// the `ui` key (`full` or `plain`; the configuration refuses any other value).
pub fn choose_front_end(plain_flag: bool, ui: &str, terminals: Terminals) -> FrontEnd {
    if !terminals.stdin {
        return FrontEnd::NonInteractive;
    }
    if plain_flag || ui.trim().eq_ignore_ascii_case("plain") || !terminals.stdout {
        FrontEnd::Plain
    } else if terminals.dumb {
        FrontEnd::DumbTerminal
    } else {
        FrontEnd::FullScreen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Terminals = Terminals {
        stdin: true,
        stdout: true,
        dumb: false,
    };

    #[test]
    fn front_end_choice() {
        assert_eq!(choose_front_end(false, "full", BOTH), FrontEnd::FullScreen);
        assert_eq!(choose_front_end(false, "Full ", BOTH), FrontEnd::FullScreen);
        assert_eq!(choose_front_end(true, "full", BOTH), FrontEnd::Plain);
        assert_eq!(choose_front_end(false, "plain", BOTH), FrontEnd::Plain);
        assert_eq!(choose_front_end(false, "PLAIN", BOTH), FrontEnd::Plain);
        let dumb = Terminals { dumb: true, ..BOTH };
        assert_eq!(
            choose_front_end(false, "full", dumb),
            FrontEnd::DumbTerminal
        );
        assert_eq!(choose_front_end(true, "full", dumb), FrontEnd::Plain);
        let piped_out = Terminals {
            stdin: true,
            stdout: false,
            dumb: false,
        };
        assert_eq!(choose_front_end(false, "full", piped_out), FrontEnd::Plain);
        for stdout in [true, false] {
            let piped_in = Terminals {
                stdin: false,
                stdout,
                dumb: false,
            };
            for (flag, ui) in [(false, "full"), (true, "full"), (false, "plain")] {
                assert_eq!(
                    choose_front_end(flag, ui, piped_in),
                    FrontEnd::NonInteractive
                );
            }
        }
    }
}
