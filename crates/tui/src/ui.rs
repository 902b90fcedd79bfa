//! Drawing: [`render`] draws an [`App`] into a frame and does nothing else (the snapshot tests
//! draw with ratatui's `TestBackend`). Layout: conversation on the left, sidebar on the right
//! (hidden below 100 columns unless F2 shows it), the input under them, the status bar last;
//! the palette, a tool form or a detail view over the middle.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use crate::app::{App, Mode, Overlay, Pane};
use crate::markdown;
use crate::palette::Form;
use crate::sidebar::TabKind;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The input grows up to this many text lines.
const INPUT_MAX_LINES: usize = 6;

/// The smallest terminal the layout fits (columns): the input with its title and a few words
/// of the conversation.
pub const MIN_WIDTH: u16 = 30;
/// The smallest terminal the layout fits (rows): three of conversation, the input's border and
/// one line, the status bar.
pub const MIN_HEIGHT: u16 = 6;

/// Draws the whole interface; below [`MIN_WIDTH`]×[`MIN_HEIGHT`] one line saying so instead of
/// a partial layout.
pub fn render(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    app.last_width.set(area.width);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let notice = format!("window too small (needs {MIN_WIDTH}×{MIN_HEIGHT})");
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(notice, app.theme.warning)))
                .wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let input_lines = app.input.line_count().clamp(1, INPUT_MAX_LINES) as u16;
    let [main, input, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(input_lines + 1),
        Constraint::Length(1),
    ])
    .areas(area);
    if app.sidebar_shown(area.width) {
        let side = (area.width / 3).clamp(24, 48);
        let [conv, bar] =
            Layout::horizontal([Constraint::Min(20), Constraint::Length(side)]).areas(main);
        draw_conversation(app, frame, conv);
        draw_sidebar(app, frame, bar);
    } else {
        draw_conversation(app, frame, main);
    }
    draw_input(app, frame, input);
    draw_status(app, frame, status);
    match &app.overlay {
        Some(Overlay::Palette(_)) => draw_palette(app, frame, area),
        Some(Overlay::Form(form)) => draw_form(app, form, frame, area),
        Some(Overlay::Detail {
            tab,
            item,
            pending,
            raw,
        }) => draw_detail(app, *tab, *item, *pending, *raw, frame, area),
        None => {}
    }
}

fn draw_conversation(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let area = crate::first_run::draw(app, frame, area);
    let width = area.width.saturating_sub(1) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if app.entries.is_empty() {
        lines.push(Line::from(Span::styled(
            "Type a message and press Enter.",
            app.theme.dim,
        )));
        lines.push(Line::from(Span::styled(
            "Ctrl+P: every tool and command · Esc: browse the sidebar · F2: sidebar · /help",
            app.theme.dim,
        )));
    }
    // Only the entries in view are laid out and copied: the others count by their (cached or
    // estimated) height, so a frame costs the same after 300 turns as after one. Entry 0 starts
    // at line 0, each next one after a blank line (with no entries: the two intro lines).
    let height = area.height as usize;
    let heights: Vec<usize> = (0..app.entries.len())
        .map(|i| app.entry_height(i, width))
        .collect();
    let total = if heights.is_empty() {
        lines.len()
    } else {
        heights.iter().sum::<usize>() + heights.len() - 1
    };
    app.geometry.set((total, height));
    let bottom = total.saturating_sub(height);
    let top = app.scroll_top.map_or(bottom, |t| t.min(bottom));
    if !heights.is_empty() {
        let mut start = 0;
        let mut window_start = None;
        for (i, &h) in heights.iter().enumerate() {
            if start >= top + height {
                break;
            }
            let end = start + h;
            if end > top {
                let mut entry_lines = app.entry_lines(i, width);
                let selected = app.mode == Mode::Browse
                    && app.pane == Pane::Conversation
                    && app.entry == Some(i);
                if selected && let Some(first) = entry_lines.first_mut() {
                    *first = first.clone().patch_style(app.theme.selected);
                }
                if window_start.is_none() {
                    window_start = Some(start);
                } else {
                    lines.push(Line::default());
                }
                lines.extend(entry_lines);
            }
            start = end + 1;
        }
        let skip = top.saturating_sub(window_start.unwrap_or(top));
        lines = lines.into_iter().skip(skip).collect();
    } else {
        lines = lines.into_iter().skip(top).collect();
    }
    lines.truncate(height);
    frame.render_widget(Paragraph::new(lines), area);
    if top < bottom {
        let more = format!(" ↓ {} more ", bottom - top);
        let w = more.chars().count() as u16;
        if area.width > w {
            let r = Rect {
                x: area.x + area.width - w - 1,
                y: area.y + area.height - 1,
                width: w,
                height: 1,
            };
            frame.render_widget(
                Paragraph::new(Span::styled(
                    more,
                    app.theme.dim.add_modifier(Modifier::REVERSED),
                )),
                r,
            );
        }
    }
}

fn draw_sidebar(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let focused = app.mode == Mode::Browse && app.pane == Pane::Sidebar && app.overlay.is_none();
    let border = if focused {
        app.theme.system
    } else {
        app.theme.dim
    };
    let block = Block::default().borders(Borders::LEFT).border_style(border);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [tabs_area, body] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    // Tab bar: the selected tab reversed, scrolled so it is visible.
    frame.render_widget(
        Paragraph::new(tab_bar(app, tabs_area.width as usize)),
        tabs_area,
    );
    let Some(tab) = app.tabs.get(app.tab) else {
        return;
    };
    let width = body.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(md) = &tab.markdown {
        let style = if tab.panel_failed {
            app.theme.warning
        } else {
            Style::default()
        };
        lines = markdown::render(md, width, style, app.theme.dim, app.theme.color);
    } else if tab.items.is_empty() {
        lines.push(Line::from(Span::styled(
            tab.empty_text.clone(),
            app.theme.dim,
        )));
    } else {
        for (i, item) in tab.items.iter().enumerate() {
            // Tabs expanded (a terminal cell drops them), widths in cells (CJK takes two).
            let meta = crate::wrap::expand_tabs(&item.meta, 0).0;
            let meta_w = meta.width();
            let room = width.saturating_sub(meta_w + 1).max(1);
            let label = fit(&crate::wrap::expand_tabs(&item.label, 0).0, room);
            let pad = width.saturating_sub(label.width() + meta_w);
            let mut style = if item.warn {
                app.theme.warning
            } else {
                Style::default()
            };
            if item.highlight {
                style = app.theme.reminder;
            }
            let meta_style = if item.warn {
                app.theme.warning
            } else {
                app.theme.dim
            };
            let mut line = Line::from(vec![
                Span::styled(label, style),
                Span::raw(" ".repeat(pad)),
                Span::styled(meta, meta_style),
            ]);
            if i == app.row && focused {
                line = line.patch_style(app.theme.selected);
            }
            lines.push(line);
        }
    }
    let height = body.height as usize;
    let skip = if tab.markdown.is_none() && app.row >= height {
        app.row + 1 - height
    } else {
        0
    };
    frame.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()),
        body,
    );
}

/// The sidebar's tab row in `width` cells: every title when they fit, else the others
/// abbreviated, else scrolled so the selected tab is always shown, with `‹` / `›` where tabs
/// are hidden on that side (at 120 columns a plugin's tab was cut off with
/// no sign that it existed).
pub fn tab_bar(app: &App, width: usize) -> Line<'static> {
    let mut titles: Vec<String> = app.tabs.iter().map(|t| format!(" {} ", t.title)).collect();
    if titles.iter().map(|t| t.width()).sum::<usize>() > width {
        // Abbreviated: the selected tab whole, the others to three characters and `…`.
        titles = app
            .tabs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i == app.tab || t.title.chars().count() <= 4 {
                    format!(" {} ", t.title)
                } else {
                    format!(" {}…", t.title.chars().take(3).collect::<String>())
                }
            })
            .collect();
    }
    let widths: Vec<usize> = titles.iter().map(|t| t.width()).collect();
    let n = titles.len();
    let selected = app.tab.min(n.saturating_sub(1));
    // The first tab shown: the smallest that keeps the selected one on the row, markers counted.
    let fits = |first: usize, last: usize| {
        let markers = usize::from(first > 0) + usize::from(last + 1 < n);
        widths[first..=last].iter().sum::<usize>() + markers <= width
    };
    let mut first = 0;
    while first < selected && !fits(first, selected) {
        first += 1;
    }
    let mut last = selected;
    while last + 1 < n && fits(first, last + 1) {
        last += 1;
    }
    let mut spans = Vec::new();
    if first > 0 {
        spans.push(Span::styled("‹", app.theme.dim));
    }
    if n > 0 {
        for (i, title) in titles.iter().enumerate().take(last + 1).skip(first) {
            let style = if i == app.tab {
                app.theme.selected
            } else {
                app.theme.dim
            };
            spans.push(Span::styled(title.clone(), style));
        }
    }
    if last + 1 < n {
        let used: usize = spans.iter().map(|s| s.content.width()).sum();
        spans.push(Span::raw(" ".repeat(width.saturating_sub(used + 1))));
        spans.push(Span::styled("›", app.theme.dim));
    }
    Line::from(spans)
}

/// `text` cut to at most `room` cells, with `…` when something was cut.
fn fit(text: &str, room: usize) -> String {
    if text.width() <= room {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
}

fn draw_input(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let title = if app.turn_running {
        " › (a reply is streaming: Enter queues) "
    } else {
        " › "
    };
    let style = if app.mode == Mode::Insert && app.overlay.is_none() {
        app.theme.user
    } else {
        app.theme.dim
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(app.theme.dim)
        .title(Span::styled(title, style));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&app.input.area, inner);
}

fn draw_status(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let s = &app.status;
    let mut spans = vec![Span::styled(
        format!(" {} ", s.model),
        app.theme.system.add_modifier(Modifier::BOLD),
    )];
    spans.push(Span::styled(format!("· {} ", s.home), app.theme.dim));
    if let Some(tokens) = s.tokens {
        spans.push(Span::styled(format!("· ~{tokens} tokens "), app.theme.dim));
    }
    let spin = SPINNER[s.tick % SPINNER.len()];
    if let Some(phase) = &s.phase {
        spans.push(Span::styled(
            format!("· {spin} {phase} "),
            app.theme.assistant,
        ));
    }
    if let Some(bg) = &s.background {
        let glyph = if s.phase.is_some() { "" } else { spin };
        spans.push(Span::styled(format!("· {glyph} {bg} "), app.theme.thought));
    }
    if let Some(mcp) = &s.mcp {
        spans.push(Span::styled(format!("· {mcp} "), app.theme.dim));
    }
    if let Some(embedding) = &s.embedding {
        spans.push(Span::styled(format!("· {embedding} "), app.theme.dim));
    }
    if let Some(ask) = &s.ask {
        spans.push(Span::styled(format!("· {ask} "), app.theme.warning));
    }
    let mode = match (app.mode, &app.overlay) {
        (_, Some(Overlay::Palette(_))) => "PALETTE",
        (_, Some(Overlay::Form(_))) => "FORM",
        (_, Some(Overlay::Detail { .. })) => "DETAIL",
        (Mode::Insert, None) => "INSERT",
        (Mode::Browse, None) => "BROWSE",
    };
    let left: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let right = format!(" {mode} ");
    let pad = (area.width as usize).saturating_sub(left + right.chars().count());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, app.theme.selected));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A centred rectangle `w`×`h` (clamped to `area`).
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn overlay_block<'a>(app: &App, title: String) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(app.theme.system)
        .title(Span::styled(
            title,
            app.theme.system.add_modifier(Modifier::BOLD),
        ))
}

fn draw_palette(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let Some(Overlay::Palette(p)) = &app.overlay else {
        return;
    };
    let rect = centered(
        area,
        (area.width * 4 / 5).max(40),
        (area.height * 3 / 4).max(8),
    );
    frame.render_widget(Clear, rect);
    let block = overlay_block(
        app,
        format!(" Palette: {} of {} ", p.matches.len(), p.entries.len()),
    );
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut lines = vec![Line::from(vec![
        Span::styled("> ", app.theme.user),
        Span::raw(p.query.clone()),
        Span::styled("▏", app.theme.dim),
    ])];
    let room = inner.height.saturating_sub(1) as usize;
    let skip = if p.selected >= room {
        p.selected + 1 - room
    } else {
        0
    };
    // Names in one column as wide as the longest (at most half the window), descriptions after
    // two spaces; a longer name is cut with `…` rather than running into its description.
    let width = inner.width as usize;
    let column = p
        .entries
        .iter()
        .map(|e| e.name.width())
        .max()
        .unwrap_or(0)
        .min(width / 2);
    for (row, &i) in p.matches.iter().enumerate().skip(skip).take(room) {
        let e = &p.entries[i];
        let name = fit(&e.name, column);
        let pad = " ".repeat(column.saturating_sub(name.width()) + 2);
        let description = fit(&e.description, width.saturating_sub(column + 2));
        let mut line = Line::from(vec![
            Span::styled(format!("{name}{pad}"), app.theme.system),
            Span::styled(description, app.theme.dim),
        ]);
        if row == p.selected {
            line = line.patch_style(app.theme.selected);
        }
        lines.push(line);
    }
    if p.matches.is_empty() {
        lines.push(Line::from(Span::styled(
            "No tool or command matches.",
            app.theme.dim,
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_form(app: &App, form: &Form, frame: &mut Frame<'_>, area: Rect) {
    let rect = centered(
        area,
        (area.width * 4 / 5).max(40),
        (form.fields.len() as u16 * 2 + 8).max(10),
    );
    frame.render_widget(Clear, rect);
    let block = overlay_block(app, format!(" {} ", form.tool));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut lines = vec![
        Line::from(Span::styled(form.description.clone(), app.theme.dim)),
        Line::default(),
    ];
    for (i, f) in form.fields.iter().enumerate() {
        let ty = match (&f.choices, f.ty) {
            (Some(c), _) => format!("one of {}", c.join("|")),
            (None, Some(t)) if !f.names.is_empty() => format!(
                "{}; ←/→ {} names",
                format!("{t:?}").to_lowercase(),
                f.names.len()
            ),
            (None, Some(t)) => format!("{t:?}").to_lowercase(),
            (None, None) => "any JSON".into(),
        };
        let mark = if f.required { "*" } else { " " };
        let focus = i == form.focus;
        let mut line = Line::from(vec![
            Span::styled(
                format!("{mark}{}: ", f.name),
                if f.required {
                    app.theme.user.add_modifier(Modifier::BOLD)
                } else {
                    app.theme.user
                },
            ),
            Span::raw(f.value.replace('\n', "⏎")),
            Span::styled(if focus { "▏" } else { "" }, app.theme.dim),
            Span::styled(format!("  ({ty})"), app.theme.dim),
        ]);
        if focus {
            line = line.patch_style(Style::default().add_modifier(Modifier::BOLD));
        }
        lines.push(line);
        if focus && !f.help.is_empty() {
            lines.push(Line::from(Span::styled(
                format!("   {}", f.help),
                app.theme.dim,
            )));
        }
    }
    lines.push(Line::default());
    if let Some(error) = &form.error {
        lines.push(Line::from(Span::styled(error.clone(), app.theme.warning)));
    }
    lines.push(Line::from(Span::styled(
        "* required · Tab next field · ←/→ choices · Enter run · Esc cancel",
        app.theme.dim,
    )));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn draw_detail(
    app: &App,
    tab: usize,
    item: usize,
    pending: Option<crate::keys::KeyAction>,
    raw: bool,
    frame: &mut Frame<'_>,
    area: Rect,
) {
    use crate::keys::KeyAction;
    let Some(t) = app.tabs.get(tab) else { return };
    let Some(it) = t.items.get(item) else { return };
    let rect = centered(
        area,
        (area.width * 4 / 5).max(40),
        (area.height * 4 / 5).max(10),
    );
    frame.render_widget(Clear, rect);
    let label = crate::wrap::expand_tabs(&it.label, 0).0;
    let block = overlay_block(app, format!(" {}: {label} ", t.title));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [body, hint] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let text = match (&it.view, raw) {
        (_, true) => crate::detail::raw_markdown(&it.detail),
        (Some(view), false) => view.clone(),
        (None, false) => detail_markdown(&it.detail),
    };
    let lines = markdown::render(
        &text,
        body.width as usize,
        Style::default(),
        app.theme.dim,
        app.theme.color,
    );
    frame.render_widget(Paragraph::new(lines), body);
    let mut keys = Vec::new();
    if t.kind.complete_tool().is_some() {
        keys.push(if pending == Some(KeyAction::CompleteItem) {
            "c again to complete"
        } else {
            "c c complete"
        });
    }
    if t.kind.delete_tool().is_some() {
        keys.push(if pending == Some(KeyAction::DeleteItem) {
            "d again to delete"
        } else {
            "d d delete"
        });
    }
    if it.path.is_some() && t.kind != TabKind::Panel {
        keys.push("e edit");
    }
    if it.view.is_some() {
        keys.push(if raw { "v the item" } else { "v the file" });
    }
    keys.push("Esc back");
    let style = if pending.is_some() {
        app.theme.warning
    } else {
        app.theme.dim
    };
    frame.render_widget(Paragraph::new(Span::styled(keys.join(" · "), style)), hint);
}

/// A file's text for the detail view: the markdown body first, then its YAML front matter as a
/// `yaml` block (the item's source fields), so `---` lines are not read as rules and headings.
pub fn detail_markdown(text: &str) -> String {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text.to_owned();
    };
    let Some(end) = rest.find("\n---") else {
        return text.to_owned();
    };
    let front = &rest[..end];
    let body = rest[end + 4..].trim_start_matches(['-']).trim();
    format!("{body}\n\n```yaml\n{front}\n```\n")
}
