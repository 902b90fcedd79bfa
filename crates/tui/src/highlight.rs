//! Syntax highlighting of code blocks with syntect (its bundled syntaxes and themes, pure-Rust
//! regex engine), loaded once on the first code block. Without colours (`NO_COLOR`) or for an
//! unknown language the code is returned unstyled.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove("base16-ocean.dark")?;
            Some(Assets { syntaxes, theme })
        })
        .as_ref()
}

/// The code's lines (without their `\n`), each as styled spans. `language` is the fence's info
/// string (first word used: `rust`, `py`, `sh`…). `color: false` returns plain spans.
pub fn highlight(code: &str, language: &str, color: bool, base: Style) -> Vec<Vec<Span<'static>>> {
    let plain = || {
        code.lines()
            .map(|l| vec![Span::styled(l.to_owned(), base)])
            .collect::<Vec<_>>()
    };
    let token = language.split_whitespace().next().unwrap_or("");
    if !color || token.is_empty() {
        return plain();
    }
    let Some(assets) = assets() else {
        return plain();
    };
    let Some(syntax) = assets
        .syntaxes
        .find_syntax_by_token(token)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(token))
    else {
        return plain();
    };
    let mut h = HighlightLines::new(syntax, &assets.theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let Ok(ranges) = h.highlight_line(line, &assets.syntaxes) else {
            return plain();
        };
        let spans = ranges
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                if text.is_empty() {
                    return None;
                }
                let fg = style.foreground;
                let mut s = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
                if style.font_style.contains(FontStyle::BOLD) {
                    s = s.add_modifier(Modifier::BOLD);
                }
                if style.font_style.contains(FontStyle::ITALIC) {
                    s = s.add_modifier(Modifier::ITALIC);
                }
                Some(Span::styled(text.to_owned(), s))
            })
            .collect();
        out.push(spans);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_and_plain_mode_is_not() {
        let code = "fn main() {\n    let x = 1;\n}\n";
        let lines = highlight(code, "rust", true, Style::new());
        assert_eq!(lines.len(), 3);
        assert!(lines[0].len() > 1, "keywords and names get their own spans");
        let text: String = lines[1].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    let x = 1;");
        let plain = highlight(code, "rust", false, Style::new());
        assert_eq!(plain[0].len(), 1);
        let unknown = highlight(code, "no-such-language", true, Style::new());
        assert_eq!(unknown[0].len(), 1);
    }
}
