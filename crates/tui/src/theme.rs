//! Colours of the interface, from the configuration's colour keys (`assistant_color`,
//! `user_input_color`, `system_message_color`, `warning_color`, `internal_thought_color`);
//! `NO_COLOR` (or [`Theme::plain`]) turns every colour off and keeps only bold/italic/reverse.

use elroy_config::Config;
use ratatui::style::{Color, Modifier, Style};

/// The styles every part of the interface draws with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used at all (false with `NO_COLOR`).
    pub color: bool,
    /// Assistant reply text.
    pub assistant: Style,
    /// The user's messages and the input prompt.
    pub user: Style,
    /// Tool calls, headings of blocks, system notices.
    pub system: Style,
    /// Errors, cancelled replies, overdue items.
    pub warning: Style,
    /// Thoughts, injected context, tool results.
    pub thought: Style,
    /// Frames, hints, secondary text.
    pub dim: Style,
    /// The selected row of a list.
    pub selected: Style,
    /// Reminder lines.
    pub reminder: Style,
}

/// `#RRGGBB` or a basic colour name as a ratatui colour; `None` for anything else.
pub fn parse_color(spec: &str) -> Option<Color> {
    let spec = spec.trim().trim_matches(['\'', '"']);
    if let Some(hex) = spec.strip_prefix('#')
        && hex.len() == 6
        && let Ok(rgb) = u32::from_str_radix(hex, 16)
    {
        let [_, r, g, b] = rgb.to_be_bytes();
        return Some(Color::Rgb(r, g, b));
    }
    spec.parse::<Color>().ok()
}

impl Theme {
    /// The theme of `config`'s colour keys; without colours when `no_color` (the caller passes
    /// whether `NO_COLOR` is set). A colour value that cannot be read is left uncoloured.
    pub fn from_config(config: &Config, no_color: bool) -> Self {
        if no_color {
            return Theme::plain();
        }
        let keys = &config.settings;
        let fg = |spec: &str| parse_color(spec).map_or_else(Style::default, |c| Style::new().fg(c));
        Theme {
            color: true,
            assistant: fg(&keys.assistant_color),
            user: fg(&keys.user_input_color),
            system: fg(&keys.system_message_color),
            warning: fg(&keys.warning_color),
            thought: fg(&keys.internal_thought_color),
            dim: Style::new().fg(Color::DarkGray),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            reminder: fg(&keys.warning_color).add_modifier(Modifier::BOLD),
        }
    }

    /// No colours: only modifiers (what `NO_COLOR` and the snapshot tests use).
    pub fn plain() -> Self {
        Theme {
            color: false,
            assistant: Style::new(),
            user: Style::new(),
            system: Style::new(),
            warning: Style::new(),
            thought: Style::new(),
            dim: Style::new(),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            reminder: Style::new().add_modifier(Modifier::BOLD),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_turns_every_colour_off() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = elroy_config::LoadOptions {
            home: Some(dir.path().to_path_buf()),
            cwd: dir.path().to_path_buf(),
            user_dir: Some(dir.path().to_path_buf()),
            ..elroy_config::LoadOptions::default()
        };
        let config = Config::load(&options).expect("config");
        let coloured = Theme::from_config(&config, false);
        assert!(coloured.color);
        assert_eq!(
            coloured.assistant,
            Style::new().fg(Color::Rgb(0x77, 0xdf, 0xd8))
        );
        assert_eq!(Theme::from_config(&config, true), Theme::plain());
    }

    #[test]
    fn colours_are_read_from_hex_and_names() {
        assert_eq!(parse_color("#77DFD8"), Some(Color::Rgb(0x77, 0xdf, 0xd8)));
        assert_eq!(parse_color("'#9ACD32'"), Some(Color::Rgb(0x9a, 0xcd, 0x32)));
        assert_eq!(parse_color("yellow"), Some(Color::Yellow));
        assert_eq!(parse_color("#12"), None);
    }
}
