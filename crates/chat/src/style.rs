//! The ANSI colours of the line chat, shared with the command line's tables (`elroy agenda`,
//! `elroy due`): a colour from the configuration as an escape, the reset code, and whether the
//! terminal can show them at all.

use elroy_commands::front_end::dumb_terminal;
use elroy_config::Config;

/// The ANSI code that ends a colour.
pub const RESET: &str = "\x1b[0m";

/// `#RRGGBB` (or a basic colour name) as an ANSI 24-bit foreground escape.
pub fn color(spec: &str) -> String {
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

/// The line chat's colours, from the configuration (empty strings when colour is off).
pub(crate) struct Palette {
    pub(crate) reset: String,
    pub(crate) assistant: String,
    pub(crate) thought: String,
    pub(crate) system: String,
    pub(crate) warning: String,
    pub(crate) user: String,
}

impl Palette {
    /// Colours from the config when standard output is a terminal, `NO_COLOR` is unset and
    /// `TERM` is not dumb; no escapes otherwise.
    pub(crate) fn from_config(config: &Config) -> Self {
        use std::io::IsTerminal;
        let enabled = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none()
            && !dumb_terminal();
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
