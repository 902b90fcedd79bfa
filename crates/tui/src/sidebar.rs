//! The sidebar's model: tabs (Agenda, Due, Memories, Requests, Codex, one per plugin panel),
//! each a list of items or a markdown panel, loaded in the background by a [`SidebarSource`].

use std::path::PathBuf;

/// Which tab a tab is (what its items can do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TabKind {
    /// Agenda items of today and the next 7 days.
    Agenda,
    /// Due items: timed ones by time, then contextual ones.
    Due,
    /// Memories.
    Memories,
    /// Feature requests.
    Requests,
    /// Codex sessions.
    Codex,
    /// A plugin panel (its `--panel` markdown).
    Panel,
}

impl TabKind {
    /// The key that picks this tab in browse mode (`m`, `g`, `d`, `r`, `s`), if any.
    pub fn key(&self) -> Option<char> {
        match self {
            TabKind::Memories => Some('m'),
            TabKind::Agenda => Some('g'),
            TabKind::Due => Some('d'),
            TabKind::Requests => Some('r'),
            TabKind::Codex => Some('s'),
            TabKind::Panel => None,
        }
    }

    /// The tool that completes an item of this tab and its name argument (`c` in browse mode).
    pub fn complete_tool(&self) -> Option<(&'static str, &'static str)> {
        match self {
            TabKind::Agenda => Some(("complete_agenda_item", "item_name")),
            TabKind::Due => Some(("complete_due_item", "name")),
            TabKind::Requests => Some(("edit_feature_request", "identifier")),
            _ => None,
        }
    }

    /// The tool that deletes an item of this tab and its name argument (`d` twice).
    pub fn delete_tool(&self) -> Option<(&'static str, &'static str)> {
        match self {
            TabKind::Agenda => Some(("delete_agenda_item", "item_name")),
            TabKind::Due => Some(("delete_due_item", "name")),
            _ => None,
        }
    }
}

/// One row of a tab.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SideItem {
    /// The row's text.
    pub label: String,
    /// Right-hand detail: checklist progress (`1/3`), a time (`09:00`), a status.
    pub meta: String,
    /// The name the item's tools take (agenda stem, due item name, request id).
    pub name: String,
    /// The item as stored (the file's text, front matter included; `v` in the detail view).
    pub detail: String,
    /// The detail view's markdown: the item as a person reads it ([`crate::detail`]); `None`:
    /// `detail` is shown.
    pub view: Option<String>,
    /// The file behind the item (`e` opens it in `$EDITOR`).
    pub path: Option<PathBuf>,
    /// Shown in the warning colour (overdue items).
    pub warn: bool,
    /// Highlighted (a reminder fired for it while the interface was open).
    pub highlight: bool,
}

/// One tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The title on the tab bar.
    pub title: String,
    /// What it shows.
    pub kind: TabKind,
    /// Its rows (empty for panels).
    pub items: Vec<SideItem>,
    /// A panel's markdown (or `Panel error: …`).
    pub markdown: Option<String>,
    /// Whether the panel's plugin failed (its `Panel error: …` is drawn as a warning).
    pub panel_failed: bool,
    /// Shown when the tab has no rows (`No agenda items.`) or could not load.
    pub empty_text: String,
}

impl Tab {
    /// An empty tab of `kind` titled `title`, shown as `loading…` until loaded.
    pub fn loading(kind: TabKind, title: &str) -> Self {
        Tab {
            title: title.to_owned(),
            kind,
            items: Vec::new(),
            markdown: None,
            panel_failed: false,
            empty_text: "loading…".into(),
        }
    }
}

/// Where the sidebar's contents come from. Called on a blocking thread after each turn and
/// command; must not panic on broken files (show the problem in the tab instead).
pub trait SidebarSource: Send + Sync {
    /// Every tab, in display order: Agenda, Due, Memories, Requests, Codex, then panels.
    fn load(&self) -> Vec<Tab>;
}

/// The tabs shown before the first load.
pub fn initial_tabs(panels: &[String]) -> Vec<Tab> {
    let mut tabs = vec![
        Tab::loading(TabKind::Agenda, "Agenda"),
        Tab::loading(TabKind::Due, "Due"),
        Tab::loading(TabKind::Memories, "Memories"),
        Tab::loading(TabKind::Requests, "Requests"),
        Tab::loading(TabKind::Codex, "Codex"),
    ];
    tabs.extend(panels.iter().map(|t| Tab::loading(TabKind::Panel, t)));
    tabs
}
