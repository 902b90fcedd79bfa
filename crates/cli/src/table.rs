//! The small table printer `elroy agenda` and `elroy due` share: colours from the configuration
//! on a terminal (elroy-chat's `style`), `NO_COLOR` honoured, plain text otherwise.

use elroy_chat::{RESET, color};
use elroy_commands::views::one_line;
use elroy_config::Config;

/// Terminal styling: the configuration's colours on a terminal without `NO_COLOR`, else none.
pub(crate) struct Style {
    enabled: bool,
    header: String,
    warning: String,
    accent: String,
}

impl Style {
    pub(crate) fn new(config: &Config) -> Self {
        use std::io::IsTerminal;
        let enabled = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let keys = &config.settings;
        Style {
            enabled,
            header: color(&keys.system_message_color),
            warning: color(&keys.warning_color),
            accent: color(&keys.assistant_color),
        }
    }

    fn paint(&self, text: &str, escape: &str) -> String {
        if self.enabled && !escape.is_empty() && !text.is_empty() {
            format!("{escape}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }
}

/// How a cell is painted.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tone {
    Plain,
    Warning,
    Accent,
}

/// One table cell.
pub(crate) struct Cell {
    text: String,
    tone: Tone,
}

impl Cell {
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Cell::toned(text, Tone::Plain)
    }

    /// A cell of `text` on one line: control characters (a model or a hand edit can put escape
    /// sequences, bells or line breaks into a name or a text) become spaces, so a table row
    /// stays one row and nothing reaches the terminal as a command.
    pub(crate) fn toned(text: impl Into<String>, tone: Tone) -> Self {
        Cell {
            text: one_line(&text.into()),
            tone,
        }
    }
}

/// A left-aligned table with a header; columns as wide as their widest cell (in characters), two
/// spaces apart, the last one not padded.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self, style: &Style) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.text.chars().count());
            }
        }
        let line = |cells: Vec<(String, &str)>| {
            let mut out = String::new();
            for (i, (text, escape)) in cells.iter().enumerate() {
                let pad = if i + 1 == cells.len() {
                    0
                } else {
                    widths[i].saturating_sub(text.chars().count()) + 2
                };
                out.push_str(&style.paint(text, escape));
                out.push_str(&" ".repeat(pad));
            }
            out.trim_end().to_owned() + "\n"
        };
        let mut out = line(
            self.header
                .iter()
                .map(|h| (h.clone(), style.header.as_str()))
                .collect(),
        );
        for row in &self.rows {
            out.push_str(&line(
                row.iter()
                    .map(|c| {
                        let escape = match c.tone {
                            Tone::Plain => "",
                            Tone::Warning => style.warning.as_str(),
                            Tone::Accent => style.accent.as_str(),
                        };
                        (c.text.clone(), escape)
                    })
                    .collect(),
            ));
        }
        out
    }
}
