//! Snapshot tests of the screen (ratatui `TestBackend`, insta): each state the issue names,
//! drawn without colours so the snapshots are plain text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use elroy_core::{ParamSpec, ParamType, ToolSpec};
use elroy_orchestrator::TurnEvent;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::{Action, App, Mode, Overlay, Reminder};
use crate::palette::PaletteEntry;
use crate::sidebar::{SideItem, Tab, TabKind};
use crate::theme::Theme;

fn draw(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| crate::ui::render(app, f)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buffer.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn app() -> App {
    let mut app = App::new(Theme::plain(), None, &["Hello".to_owned()]);
    app.status.model = "gpt-test".into();
    app.status.home = "~/.elroy".into();
    app.status.tokens = Some(1234);
    app.tools = tools().iter().map(PaletteEntry::tool).collect();
    app
}

fn tools() -> Vec<ToolSpec> {
    let mut add = ToolSpec::new("add_agenda_item", "Add an item to the agenda.", None);
    add.params = Some(vec![
        ParamSpec::new("text", ParamType::String, "What to do.", true),
        ParamSpec::new(
            "item_date",
            ParamType::String,
            "YYYY-MM-DD; default today.",
            false,
        ),
    ]);
    let mut ls = ToolSpec::new("ls", "List a directory.", None);
    let mut mode = ParamSpec::new(
        "max_entries",
        ParamType::Integer,
        "At most this many entries.",
        false,
    );
    mode.enum_values = None;
    let mut kind = ParamSpec::new("scope", ParamType::String, "Which sessions.", false);
    kind.enum_values = Some(vec!["contrib".into(), "elroy".into()]);
    ls.params = Some(vec![
        ParamSpec::new("path", ParamType::String, "The directory.", true),
        mode,
        kind,
    ]);
    vec![
        add,
        ToolSpec::new("complete_agenda_item", "Mark an agenda item done.", None),
        ToolSpec::new("get_current_date", "Today's date and time.", None),
        ls,
        ToolSpec::new("web_search", "Search the web.", None),
    ]
}

fn home_tabs() -> Vec<Tab> {
    let item = |label: &str, meta: &str| {
        let detail = format!(
            "---\nname: {label}\ndate: 2026-12-01\nstatus: created\ntrigger_datetime: 2026-12-01 08:30:00+00:00\n---\n# {label}\n\n- [x] call the bank\n- [ ] send the form\n\n## Updates\n\n- 2026-11-30: started"
        );
        let kolkata = jiff::tz::TimeZone::get("Asia/Kolkata").unwrap();
        SideItem {
            label: label.into(),
            meta: meta.into(),
            name: label.into(),
            view: Some(crate::detail::item_markdown(&detail, &kolkata)),
            detail,
            path: Some(format!("/home/agenda/{label}.md").into()),
            ..SideItem::default()
        }
    };
    let tab = |kind: TabKind, title: &str, items: Vec<SideItem>| Tab {
        title: title.into(),
        kind,
        items,
        markdown: None,
        panel_failed: false,
        empty_text: "none".into(),
    };
    let mut overdue = item("Call the dentist", "overdue 08:30");
    overdue.warn = true;
    vec![
        tab(
            TabKind::Agenda,
            "Agenda",
            vec![
                item("Renew passport", "today 1/2"),
                item("Plan the trip", "Thu 03"),
            ],
        ),
        tab(
            TabKind::Due,
            "Due",
            vec![
                overdue,
                item("Water plants", "18:00"),
                item("When in Paris", "context"),
            ],
        ),
        tab(
            TabKind::Memories,
            "Memories",
            vec![item("Likes green tea", ""), item("Works at Acme", "")],
        ),
        tab(
            TabKind::Requests,
            "Requests",
            vec![item("Shorter replies", "open")],
        ),
        tab(TabKind::Codex, "Codex", vec![]),
        Tab {
            title: "Hello".into(),
            kind: TabKind::Panel,
            items: vec![],
            markdown: Some("# Hello from contrib\n\nThis tab is drawn by hello_panel.".into()),
            panel_failed: false,
            empty_text: String::new(),
        },
    ]
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

#[test]
fn empty_home() {
    let mut app = app();
    app.on_sidebar(
        crate::sidebar::initial_tabs(&["Hello".into()])
            .into_iter()
            .map(|mut t| {
                t.empty_text = format!("No {}.", t.title.to_lowercase());
                t
            })
            .collect(),
    );
    insta::assert_snapshot!(draw(&app, 120, 20));
}

/// The first-run panel in the conversation pane, a column of space between its box and the
/// sidebar's border.
#[test]
fn first_run_panel_beside_the_sidebar() {
    let mut app = app();
    app.status.model = "no model".into();
    app.first_run = Some(crate::first_run::FirstRun::searching());
    crate::first_run::on_servers(
        &mut app,
        vec![elroy_commands::LocalServer {
            name: "llama.cpp",
            base_url: "http://127.0.0.1:8080/v1".into(),
            models: vec!["smollm2".into()],
        }],
    );
    app.on_sidebar(home_tabs());
    let screen = draw(&app, 120, 24);
    for line in screen
        .lines()
        .filter(|l| l.contains('┐') || l.contains('┘'))
    {
        let panel_end = line.find('┐').or_else(|| line.find('┘')).unwrap();
        let rest = &line[panel_end + '┐'.len_utf8()..];
        assert!(
            rest.starts_with(' '),
            "the panel touches the sidebar: {line}"
        );
    }
    insta::assert_snapshot!(screen);
}

#[test]
fn home_with_agenda_due_memories_requests_and_a_panel() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    app.mode = Mode::Browse;
    let mut screens = draw(&app, 120, 16);
    app.on_key(key(KeyCode::Char('d')));
    screens.push_str(&draw(&app, 120, 10));
    app.on_key(key(KeyCode::Char('m')));
    screens.push_str(&draw(&app, 120, 10));
    app.on_key(key(KeyCode::Char('r')));
    screens.push_str(&draw(&app, 120, 10));
    app.on_key(key(KeyCode::Right));
    app.on_key(key(KeyCode::Right));
    screens.push_str(&draw(&app, 120, 10));
    insta::assert_snapshot!(screens);
}

#[test]
fn streaming_reply_with_a_code_block_and_a_tool_call() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    type_text(&mut app, "Add a trip item and show me hello world");
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        [Action::Send(
            "Add a trip item and show me hello world".into()
        )]
    );
    app.on_turn_event(TurnEvent::Status("thinking...".into()));
    app.on_turn_event(TurnEvent::ToolCall {
        id: "1".into(),
        name: "add_agenda_item".into(),
        arguments: "{\"text\": \"Plan the trip\"}".into(),
    });
    app.on_turn_event(TurnEvent::ToolResult {
        id: "1".into(),
        name: "add_agenda_item".into(),
        content: "Agenda item 'Plan the trip' created for 2026-12-01.".into(),
        is_error: false,
    });
    app.on_turn_event(TurnEvent::ToolCall {
        id: "2".into(),
        name: "read_file".into(),
        arguments: "{\"path\": \"notes.txt\"}".into(),
    });
    app.on_turn_event(TurnEvent::ToolResult {
        id: "2".into(),
        name: "read_file".into(),
        content: "Error invoking tool read_file: no such file: notes.txt".into(),
        is_error: true,
    });
    for delta in [
        "Done! ",
        "Here is **hello world** in Rust, a language whose compiler ",
        "checks a lot:",
    ] {
        app.on_turn_event(TurnEvent::TextDelta(delta.into()));
    }
    app.on_turn_event(TurnEvent::CodeBlock {
        language: "rust".into(),
        content: "fn main() {\n    println!(\"hello world\");\n}\n".into(),
    });
    app.on_turn_event(TurnEvent::TextDelta("And it".into()));
    // Mid-stream: the reply is drawn as far as it came, the status shows the phase.
    insta::assert_snapshot!(draw(&app, 100, 28));
}

#[test]
fn palette_filtered() {
    let mut app = app();
    app.on_key(ctrl('p'));
    type_text(&mut app, "agnd");
    let Some(Overlay::Palette(p)) = &app.overlay else {
        panic!("palette open")
    };
    assert_eq!(p.matches.len(), 3, "two tools and /agenda");
    insta::assert_snapshot!(draw(&app, 100, 18));
}

#[test]
fn tool_form_with_a_validation_error() {
    let mut app = app();
    app.on_key(ctrl('p'));
    type_text(&mut app, "ls");
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.overlay, Some(Overlay::Form(_))));
    app.on_key(key(KeyCode::Tab));
    type_text(&mut app, "many");
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Right));
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        [Action::RunTool {
            name: "ls".into(),
            arguments: r#"{"max_entries":"many","scope":"contrib"}"#.into(),
            form: true
        }]
    );
    // What the registry answers for a model's call with these arguments.
    app.on_tool_result(
        "ls",
        r#"{"max_entries":"many"}"#,
        "Error invoking tool ls: Missing required argument: path".into(),
        true,
        true,
    );
    insta::assert_snapshot!(draw(&app, 100, 20));
}

#[test]
fn detail_view() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('k')));
    app.on_key(key(KeyCode::Enter));
    assert!(matches!(app.overlay, Some(Overlay::Detail { .. })));
    let mut screen = draw(&app, 100, 22);
    app.on_key(key(KeyCode::Char('d')));
    let confirm = draw(&app, 100, 22);
    let hint = confirm
        .lines()
        .find(|l| l.contains("again"))
        .expect("the confirmation is shown");
    screen.push_str(hint);
    let actions = app.on_key(key(KeyCode::Char('d')));
    assert_eq!(
        actions,
        [Action::RunTool {
            name: "delete_agenda_item".into(),
            arguments: r#"{"item_name":"Renew passport"}"#.into(),
            form: false
        }]
    );
    insta::assert_snapshot!(screen);
}

/// `v` in the detail view shows the file as stored (front matter included), `v` again the item.
#[test]
fn detail_view_raw_file() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('v')));
    let screen = draw(&app, 100, 22);
    assert!(
        screen.contains("trigger_datetime: 2026-12-01 08:30:00+00:00"),
        "{screen}"
    );
    app.on_key(key(KeyCode::Char('v')));
    let again = draw(&app, 100, 22);
    assert!(
        again.contains("Due: Tue 2026-12-01 14:00 +05:30"),
        "{again}"
    );
    insta::assert_snapshot!(screen);
}

/// `c` asks before completing, as delete asks for `d d`: in browse mode (a reported case)
/// and in the detail view (the other place `c` works); another key drops the question.
#[test]
fn c_asks_for_a_second_c_before_completing() {
    let complete = [Action::RunTool {
        name: "complete_agenda_item".into(),
        arguments: r#"{"item_name":"Renew passport"}"#.into(),
        form: false,
    }];
    let mut app = app();
    app.on_sidebar(home_tabs());
    app.on_key(key(KeyCode::Esc));
    assert!(app.on_key(key(KeyCode::Char('c'))).is_empty());
    assert!(draw(&app, 120, 30).contains("c again to complete 'Renew passport'"));
    assert!(app.on_key(key(KeyCode::Char('j'))).is_empty());
    app.on_key(key(KeyCode::Char('k')));
    assert!(
        app.on_key(key(KeyCode::Char('c'))).is_empty(),
        "asked again"
    );
    assert_eq!(app.on_key(key(KeyCode::Char('c'))), complete);
    app.on_key(key(KeyCode::Enter));
    assert!(app.on_key(key(KeyCode::Char('c'))).is_empty());
    assert!(draw(&app, 120, 30).contains("c again to complete"));
    assert_eq!(app.on_key(key(KeyCode::Char('c'))), complete);
}

#[test]
fn small_terminal_80x24_hides_the_sidebar_and_f2_shows_it() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    type_text(&mut app, "hello");
    app.on_key(key(KeyCode::Enter));
    app.on_turn_event(TurnEvent::TextDelta("Hi! A long line that has to wrap at the edge of a narrow terminal without splitting any of its words.".into()));
    app.on_turn_end();
    app.on_reminders(vec![Reminder {
        name: "Call the dentist".into(),
        text: "Ask about the invoice".into(),
        time: "09:00".into(),
    }]);
    let mut screens = draw(&app, 80, 24);
    app.on_key(key(KeyCode::F(2)));
    screens.push_str(&draw(&app, 80, 24));
    insta::assert_snapshot!(screens);
}

#[test]
fn cancel_keeps_the_partial_reply_and_a_queued_message_follows() {
    let mut app = app();
    type_text(&mut app, "first");
    app.on_key(key(KeyCode::Enter));
    app.on_turn_event(TurnEvent::TextDelta("Partial answ".into()));
    type_text(&mut app, "second");
    assert!(
        app.on_key(key(KeyCode::Enter)).is_empty(),
        "queued, not sent"
    );
    assert_eq!(app.on_key(ctrl('c')), [Action::Cancel]);
    app.on_turn_event(TurnEvent::Cancelled);
    let actions = app.on_turn_end();
    assert!(
        actions.contains(&Action::Send("second".into())),
        "{actions:?}"
    );
    let screen = draw(&app, 80, 14);
    assert!(screen.contains("Partial answ"), "{screen}");
    assert!(screen.contains("(cancelled)"), "{screen}");
    assert!(screen.contains("Queued (1 waiting)"), "{screen}");
    // Ctrl+C with no turn clears the input; Ctrl+D on an empty input quits.
    app.on_turn_end();
    type_text(&mut app, "draft");
    assert!(app.on_key(ctrl('c')).is_empty());
    assert!(app.input.is_empty());
    assert_eq!(app.on_key(ctrl('d')), [Action::Quit]);
}

#[test]
fn scrolling_keeps_its_place_while_a_reply_streams() {
    let mut app = app();
    for i in 0..40 {
        app.notice(crate::conversation::NoticeKind::Info, format!("line {i}"));
    }
    draw(&app, 80, 20);
    app.on_key(key(KeyCode::PageUp));
    let before = draw(&app, 80, 20);
    app.entries
        .push(crate::conversation::Entry::streaming_reply());
    app.on_turn_event(TurnEvent::TextDelta("new text arriving".into()));
    let after = draw(&app, 80, 20);
    assert_eq!(
        before.lines().next(),
        after.lines().next(),
        "the view did not move"
    );
    app.on_key(key(KeyCode::PageDown));
    app.on_key(key(KeyCode::PageDown));
    assert!(draw(&app, 80, 20).contains("new text arriving"));
}

#[test]
fn slash_commands_and_newlines() {
    let mut app = app();
    type_text(&mut app, "/agenda");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Command("/agenda".into())]
    );
    type_text(&mut app, "//etc");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Action::Send("/etc".into())]
    );
    app.on_turn_end();
    type_text(&mut app, "a");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "b");
    app.on_paste("c\nd");
    assert_eq!(app.input.text(), "a\nbc\nd");
}

#[test]
fn name_fields_cycle_through_existing_names() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    let mut complete = ToolSpec::new("complete_agenda_item", "Mark an agenda item done.", None);
    complete.params = Some(vec![ParamSpec::new(
        "item_name",
        ParamType::String,
        "The item.",
        true,
    )]);
    app.tools = vec![PaletteEntry::tool(&complete)];
    app.on_key(ctrl('p'));
    type_text(&mut app, "complete");
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Right));
    let Some(Overlay::Form(form)) = &app.overlay else {
        panic!("form open")
    };
    assert_eq!(form.fields[0].value, "Renew passport");
    app.on_key(key(KeyCode::Right));
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        [Action::RunTool {
            name: "complete_agenda_item".into(),
            arguments: r#"{"item_name":"Plan the trip"}"#.into(),
            form: true
        }]
    );
}

#[test]
fn proactive_reminders_start_a_turn_only_when_none_runs() {
    let dentist = || Reminder {
        name: "Call the dentist".into(),
        text: "Ask about the invoice".into(),
        time: "09:00".into(),
    };
    // Off (the default): a reminder line and a bell, no turn.
    let mut off = app();
    let actions = off.on_reminders(vec![dentist()]);
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Proactive(_))),
        "{actions:?}"
    );
    assert!(!off.turn_running);

    // On, idle: the assistant speaks first, with the item in the (hidden) message.
    let mut on = app();
    on.proactive = true;
    let actions = on.on_reminders(vec![dentist()]);
    let message = actions
        .iter()
        .find_map(|a| match a {
            Action::Proactive(text) => Some(text.clone()),
            _ => None,
        })
        .expect("a proactive turn");
    assert!(
        message.contains("09:00 Call the dentist — Ask about the invoice"),
        "{message}"
    );
    assert!(on.turn_running);

    // On, while a turn runs: the next turn gets the due item anyway (K5); no second turn.
    let mut busy = app();
    busy.proactive = true;
    type_text(&mut busy, "hello");
    busy.on_key(key(KeyCode::Enter));
    let actions = busy.on_reminders(vec![dentist()]);
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Proactive(_))),
        "{actions:?}"
    );
}

/// Below the minimum size one line says so instead of a partial layout (at 101x5 the
/// input row was not drawn); another too-small size (too narrow: 20x30); and back at a usable
/// size the typed input is drawn again.
#[test]
fn a_window_too_small_says_so_and_the_input_comes_back() {
    let mut app = app();
    type_text(&mut app, "my draft");
    for (width, height) in [(101, 5), (20, 30)] {
        let screen = draw(&app, width, height);
        let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words == "window too small (needs 30×6)",
            "{width}x{height}:\n{screen}"
        );
        assert!(!screen.contains("my draft"), "{screen}");
        app.on_resize();
    }
    app.on_resize();
    let screen = draw(&app, 101, 12);
    assert!(screen.contains("my draft"), "{screen}");
}

/// A hint is not appended again when it is already the last line: Ctrl+C on an empty input
/// (a reported case) and Ctrl+R with nothing matching (another hint).
#[test]
fn repeated_hints_are_not_appended() {
    let mut app = app();
    for _ in 0..3 {
        assert!(app.on_key(ctrl('c')).is_empty());
    }
    assert_eq!(app.entries.len(), 1, "{:?}", app.entries.len());
    type_text(&mut app, "nothing like it");
    for _ in 0..2 {
        app.on_key(ctrl('r'));
    }
    assert_eq!(app.entries.len(), 2);
}

#[test]
fn ctrl_z_asks_the_event_loop_to_suspend() {
    let mut app = app();
    type_text(&mut app, "kept");
    assert_eq!(app.on_key(ctrl('z')), [Action::Suspend]);
    assert_eq!(app.input.text(), "kept");
}

/// Tabs are expanded for display and kept in the stored text. Cases: a sidebar row
/// (`Pack:\tpassport`, a reported case, drawn `Pack:   passport`), a code block (a Makefile
/// recipe keeps its indent), a tool result and a detail view (other places tabs appear).
#[test]
fn tabs_are_expanded_wherever_text_is_shown() {
    let mut app = app();
    let mut tabs = home_tabs();
    tabs[0].items[0].label = "Pack:\tpassport".into();
    tabs[0].items[0].detail = "Bring:\tthe blue folder".into();
    tabs[0].items[0].view = Some(crate::detail::item_markdown(
        "Bring:\tthe blue folder",
        &jiff::tz::TimeZone::UTC,
    ));
    app.on_sidebar(tabs);
    app.on_turn_event(TurnEvent::TextDelta(
        "The recipe:\n\n```make\nall:\n\tcc -o hello hello.c\n```\n".into(),
    ));
    app.on_turn_end();
    app.on_tool_result("ls", "{}", "a.txt\tb.txt".into(), false, false);
    let screen = draw(&app, 120, 30);
    assert!(screen.contains("│Pack:   passport"), "{screen}");
    assert!(screen.contains("    cc -o hello hello.c"), "{screen}");
    assert!(screen.contains("a.txt   b.txt"), "{screen}");
    assert_eq!(
        app.tabs[0].items[0].label, "Pack:\tpassport",
        "stored text keeps the tab"
    );
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Enter));
    let screen = draw(&app, 120, 30);
    assert!(screen.contains("Bring:  the blue folder"), "{screen}");
    assert!(screen.contains("Agenda: Pack:   passport"), "{screen}");
}

/// The tab row keeps the selected tab visible and marks hidden tabs; a plugin's tab is reachable
/// by its number key. Cases: 120 columns (reported example: `Hello` was cut off silently)
/// and 100 columns with the last tab selected (hidden tabs on the left).
#[test]
fn the_tab_row_marks_hidden_tabs_and_plugin_tabs_have_number_keys() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    let bar = |app: &App, width| {
        crate::ui::tab_bar(app, width)
            .spans
            .iter()
            .map(|s| s.content.to_string())
            .collect::<String>()
    };
    // 39 cells (the sidebar at 120 columns): the other tabs abbreviated, all shown.
    let row = bar(&app, 39);
    assert_eq!(row, " Agenda  Due  Mem… Req… Cod… Hel…", "{row:?}");
    let row = bar(&app, 20);
    assert!(row.starts_with(" Agenda "), "{row:?}");
    assert!(row.ends_with('›'), "{row:?}");
    assert!(!row.contains("Hel"), "{row:?}");
    assert_eq!(crate::keys::tab_key(&app.tabs, 5), Some('6'));
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('6')));
    assert_eq!(app.tabs[app.tab].title, "Hello");
    let row = bar(&app, 39);
    assert_eq!(row, " Age… Due  Mem… Req… Cod… Hello ", "{row:?}");
    let row = bar(&app, 20);
    assert!(row.starts_with('‹'), "{row:?}");
    assert!(row.contains(" Hello "), "{row:?}");
    assert!(!row.ends_with('›'), "{row:?}");
    let help = crate::keys::help_lines(&app.tabs).join("\n");
    assert!(help.contains("`6` Hello"), "{help}");
    assert!(help.contains("`Ctrl+Z`"), "{help}");
}

/// `/help`'s key section (appended to the command list by the event loop), drawn as the
/// conversation shows it: every context's keys and the tabs with their keys.
#[test]
fn help_keys() {
    let mut app = app();
    app.on_sidebar(home_tabs());
    let lines = crate::keys::help_lines(&app.tabs);
    app.on_command_output(&lines, false);
    insta::assert_snapshot!(draw(&app, 100, 50));
}

/// The palette hides tools no person calls and keeps long names out of their descriptions.
/// Cases: `get_fast_recall` (a reported case) and `restart_session` hidden;
/// `get_source_content_for_memory` (29 characters, past the old 28-cell column) aligned.
#[test]
fn the_palette_hides_internal_tools_and_aligns_long_names() {
    let mut app = app();
    let mut specs = tools();
    specs.push(ToolSpec::new(
        "get_fast_recall",
        "No-op tool used to acknowledge synthetic recall context.",
        None,
    ));
    specs.push(ToolSpec::new(
        "restart_session",
        "Restart the session.",
        None,
    ));
    specs.push(ToolSpec::new(
        "get_source_content_for_memory",
        "Retrieves content of the source for a memory.",
        None,
    ));
    app.tools = specs.iter().map(PaletteEntry::tool).collect();
    app.on_key(ctrl('p'));
    let screen = draw(&app, 120, 40);
    assert!(!screen.contains("get_fast_recall"), "{screen}");
    assert!(!screen.contains("No-op"), "{screen}");
    assert!(!screen.contains("restart_session"), "{screen}");
    assert!(
        screen.contains("get_source_content_for_memory  execute  Retrieves content"),
        "{screen}"
    );
}
