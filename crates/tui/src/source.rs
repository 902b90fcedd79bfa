//! The sidebar's real contents, read from the home's stores through the runtime's services
//! (opened lazily, shared with the session): agenda, due items, memories, feature requests,
//! Codex sessions and plugin panels. A store that cannot be opened shows its error in its tab.

use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_commands::views;
use elroy_core::{RecallKind, Services, TimeContext, UserId};
use elroy_feature_requests::FeatureRequestStore;
use elroy_memory::MemoryStore;
use elroy_plugins::Panels;
use elroy_tools_codex::CodexSessions;
use elroy_transcript::TranscriptStore;
use jiff::ToSpan;

use crate::sidebar::{SideItem, SidebarSource, Tab, TabKind};

/// Days of the Agenda tab after today.
const AGENDA_DAYS: i64 = 7;
/// Memories and Codex sessions listed at most.
const LIST_LIMIT: usize = 200;

/// Why a tab could not be loaded; its text follows `Could not load: ` in the tab.
#[derive(Debug, thiserror::Error)]
pub enum SidebarError {
    /// The store could not be opened (or is not there): the services' error.
    #[error(transparent)]
    Store(#[from] elroy_core::ToolError),
    /// The agenda store failed.
    #[error(transparent)]
    Agenda(#[from] elroy_agenda::AgendaError),
    /// The memory store failed.
    #[error(transparent)]
    Memory(#[from] elroy_memory::MemoryError),
    /// The feature requests could not be read.
    #[error(transparent)]
    Requests(#[from] elroy_markdown::MarkdownError),
    /// The Codex sessions could not be read.
    #[error(transparent)]
    Codex(#[from] elroy_tools_codex::SessionStoreError),
    /// The agenda's last day is past the calendar's end.
    #[error(transparent)]
    Date(#[from] jiff::Error),
}

/// Reads every tab from `services` (the runtime's, so the stores are the session's).
pub struct StoreSidebar {
    services: Services,
    time: TimeContext,
}

impl StoreSidebar {
    /// A source over `services` with the session's clock and zone.
    pub fn new(services: Services, time: TimeContext) -> Self {
        StoreSidebar { services, time }
    }

    fn tab(
        &self,
        kind: TabKind,
        title: &str,
        result: Result<Vec<SideItem>, SidebarError>,
        empty: &str,
    ) -> Tab {
        let mut tab = Tab::loading(kind, title);
        match result {
            Ok(items) => {
                tab.items = items;
                tab.empty_text = empty.to_owned();
            }
            Err(e) => tab.empty_text = format!("Could not load: {e}"),
        }
        tab
    }

    /// The agenda items of today and the next [`AGENDA_DAYS`] days ([`views::agenda_days`]),
    /// each with its day (`today`, `Wed 02`) and checklist progress.
    fn agenda(&self) -> Result<Vec<SideItem>, SidebarError> {
        let store: Arc<AgendaStore> = self.services.require()?;
        let today = self.time.today();
        let days = views::Days {
            first: today,
            last: today.checked_add(AGENDA_DAYS.days())?,
        };
        let listing = views::agenda_days(&store, days)?;
        Ok(listing
            .entries
            .into_iter()
            .map(|entry| {
                let day = if entry.date == today {
                    "today".to_owned()
                } else {
                    entry.date.strftime("%a %d").to_string()
                };
                let meta = match entry.progress {
                    Some((done, total)) => format!("{day} {done}/{total}"),
                    None => day,
                };
                let path = store.agenda_dir().join(format!("{}.md", entry.item.stem));
                let detail =
                    std::fs::read_to_string(&path).unwrap_or_else(|_| entry.item.text().to_owned());
                SideItem {
                    label: entry.title(),
                    meta,
                    name: entry.item.stem.clone(),
                    view: Some(crate::detail::item_markdown(&detail, &self.time.tz)),
                    detail,
                    path: Some(path),
                    ..SideItem::default()
                }
            })
            .collect())
    }

    /// The due list ([`views::due_list`], the order `elroy due` and `/due` show): timed items
    /// with how far away or overdue they are (a repeating one marked ↻; the detail view gives
    /// the time as the tools confirm it), then contextual ones.
    fn due(&self) -> Result<Vec<SideItem>, SidebarError> {
        let store: Arc<AgendaStore> = self.services.require()?;
        let list = views::due_list(&store, &self.time)?;
        let file = |stem: &str, text: &str| {
            let path = store.agenda_dir().join(format!("{stem}.md"));
            let detail = std::fs::read_to_string(&path).unwrap_or_else(|_| text.to_owned());
            (path, detail)
        };
        let mut items = Vec::new();
        for timed in list.timed {
            let (path, detail) = file(&timed.item.stem, &timed.item.text);
            let mark = if timed.repeats.is_some() { " ↻" } else { "" };
            items.push(SideItem {
                view: Some(crate::detail::item_markdown(&detail, &self.time.tz)),
                label: timed.item.name.clone(),
                meta: format!("{}{mark}", timed.relative),
                name: timed.item.name,
                detail,
                path: Some(path),
                warn: timed.overdue,
                highlight: false,
            });
        }
        for other in list.contextual {
            let (path, detail) = file(&other.item.stem, &other.item.text);
            items.push(SideItem {
                view: Some(crate::detail::item_markdown(&detail, &self.time.tz)),
                label: other.item.name.clone(),
                meta: "context".into(),
                name: other.item.name,
                detail,
                path: Some(path),
                ..SideItem::default()
            });
        }
        Ok(items)
    }

    /// The memories in the current context first (pinned or recalled there, marked `in context`),
    /// then the other active ones by name, at most [`LIST_LIMIT`].
    fn memories(&self) -> Result<Vec<SideItem>, SidebarError> {
        let store: Arc<MemoryStore> = self.services.require()?;
        let names = store.active_names()?;
        let in_context = self.context_memories();
        let mut ordered: Vec<(String, bool)> = in_context
            .iter()
            .filter(|n| names.contains(n))
            .map(|n| (n.clone(), true))
            .collect();
        ordered.extend(
            names
                .into_iter()
                .filter(|n| !in_context.contains(n))
                .map(|n| (n, false)),
        );
        let mut items = Vec::new();
        for (name, current) in ordered.into_iter().take(LIST_LIMIT) {
            let (detail, path) = match store.active_by_name(&name) {
                Ok(Some(memory)) => (
                    store.text(&memory).unwrap_or_default(),
                    Some(store.path_of(&memory)),
                ),
                _ => (String::new(), None),
            };
            items.push(SideItem {
                label: name.clone(),
                meta: if current {
                    "in context".into()
                } else {
                    String::new()
                },
                name,
                view: Some(crate::detail::item_markdown(&detail, &self.time.tz)),
                detail,
                path,
                ..SideItem::default()
            });
        }
        Ok(items)
    }

    /// Names of the memories carried by recall messages of the active context, newest first.
    fn context_memories(&self) -> Vec<String> {
        let (Some(transcript), Some(user)) = (
            self.services.get::<TranscriptStore>(),
            self.services.get::<UserId>(),
        ) else {
            return Vec::new();
        };
        let Ok(context) = transcript.active_context(user.0) else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for stored in context.iter().rev() {
            for meta in stored.message.recall_metadata().unwrap_or_default() {
                if meta.memory_type == RecallKind::Memory && !names.contains(&meta.name) {
                    names.push(meta.name);
                }
            }
        }
        names
    }

    fn requests(&self) -> Result<Vec<SideItem>, SidebarError> {
        let store: Arc<FeatureRequestStore> = self.services.require()?;
        let requests = store.requests()?;
        Ok(requests
            .into_iter()
            .map(|r| SideItem {
                label: r.title.clone(),
                meta: r.status.clone(),
                name: r.id.clone(),
                detail: r.render(),
                path: Some(store.dir().join(&r.file_name)),
                ..SideItem::default()
            })
            .collect())
    }

    fn codex(&self) -> Result<Vec<SideItem>, SidebarError> {
        let Some(sessions) = self.services.get::<CodexSessions>() else {
            return Ok(Vec::new());
        };
        let user = self.services.get::<UserId>().map(|u| u.0);
        let list = sessions.0.list(user, None, LIST_LIMIT)?;
        Ok(list
            .into_iter()
            .map(|s| SideItem {
                label: first_line(&s.prompt),
                meta: s.status.as_str().to_owned(),
                name: s.session_id.clone(),
                detail: format!(
                    "**{}** ({})\n\n{}\n\n{}",
                    s.session_id,
                    s.status.as_str(),
                    s.prompt,
                    if s.summary.is_empty() {
                        &s.final_message
                    } else {
                        &s.summary
                    }
                ),
                ..SideItem::default()
            })
            .collect())
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

impl SidebarSource for StoreSidebar {
    fn load(&self) -> Vec<Tab> {
        let mut tabs = vec![
            self.tab(
                TabKind::Agenda,
                "Agenda",
                self.agenda(),
                "Nothing on the agenda this week.",
            ),
            self.tab(TabKind::Due, "Due", self.due(), "No due items."),
            self.tab(
                TabKind::Memories,
                "Memories",
                self.memories(),
                "No memories yet.",
            ),
            self.tab(
                TabKind::Requests,
                "Requests",
                self.requests(),
                "No feature requests.",
            ),
            self.tab(TabKind::Codex, "Codex", self.codex(), "No Codex sessions."),
        ];
        if let Some(panels) = self.services.get::<Panels>() {
            for panel in &panels.0 {
                let mut tab = Tab::loading(TabKind::Panel, &panel.title);
                let shown = elroy_plugins::panel_markdown(panel);
                tab.panel_failed = shown.is_err();
                tab.markdown = Some(shown.unwrap_or_else(|e| e.to_string()));
                tab.empty_text = String::new();
                tabs.push(tab);
            }
        }
        tabs
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use elroy_runtime::Runtime;

    fn runtime(home: &std::path::Path) -> Runtime {
        let mut env = std::collections::HashMap::new();
        env.insert("ELROY_NOW".to_owned(), "2026-12-01T08:00:00Z".to_owned());
        env.insert("TZ".to_owned(), "UTC0".to_owned());
        let options = elroy_config::LoadOptions {
            home: Some(home.to_path_buf()),
            cwd: home.to_path_buf(),
            user_dir: Some(home.to_path_buf()),
            env,
            ..elroy_config::LoadOptions::default()
        };
        Runtime::open_with(
            elroy_config::Config::load(&options).unwrap(),
            elroy_runtime::logged_warnings(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn every_tab_is_read_from_the_stores() {
        let dir = tempfile::tempdir().unwrap();
        let rt = runtime(dir.path());
        for (tool, args) in [
            ("add_agenda_item", r#"{"text": "Renew passport"}"#),
            (
                "add_agenda_checklist_item",
                r#"{"item_name": "Renew passport", "text": "photos"}"#,
            ),
            (
                "add_agenda_item",
                r#"{"text": "Plan the trip", "item_date": "2026-12-03"}"#,
            ),
            (
                "add_agenda_item",
                r#"{"text": "Next month", "item_date": "2027-01-15"}"#,
            ),
            (
                "create_due_item",
                r#"{"name": "Call the dentist", "text": "Ask about the invoice", "trigger_time": "2026-12-01T08:30:00Z"}"#,
            ),
            (
                "create_due_item",
                r#"{"name": "Water plants", "text": "Balcony", "trigger_time": "2026-12-01T18:00:00Z"}"#,
            ),
            (
                "create_due_item",
                r#"{"name": "In Paris", "text": "Visit the museum", "trigger_context": "when in Paris"}"#,
            ),
            (
                "create_due_item",
                r#"{"name": "Stretch", "text": "Five minutes", "trigger_time": "every day at 20:00"}"#,
            ),
            (
                "create_memory",
                r#"{"name": "Likes green tea", "text": "Prefers green tea in the afternoon."}"#,
            ),
            (
                "make_feature_request",
                r#"{"title": "Shorter replies", "description": "Keep it brief."}"#,
            ),
        ] {
            let result = rt.call_tool(tool, Some(args)).await;
            assert!(!result.is_error, "{tool}: {}", result.content);
        }
        // An hour later: the 08:30 item is overdue.
        let later = TimeContext::fixed("2026-12-01T09:00:00Z".parse().unwrap(), rt.time.tz.clone());
        let tabs = StoreSidebar::new(rt.services.clone(), later).load();
        let rows = |kind: TabKind| -> Vec<(String, String)> {
            let tab = tabs.iter().find(|t| t.kind == kind).unwrap();
            tab.items
                .iter()
                .map(|i| (i.label.clone(), i.meta.clone()))
                .collect()
        };
        let agenda = rows(TabKind::Agenda);
        assert_eq!(agenda[0], ("Renew passport".into(), "today 0/1".into()));
        assert_eq!(agenda[1].0, "Plan the trip");
        assert_eq!(
            agenda.len(),
            2,
            "only today and the next 7 days: {agenda:?}"
        );
        let due = rows(TabKind::Due);
        // The order and the relative times of `elroy due` and `/due`.
        assert_eq!(due[0], ("Call the dentist".into(), "overdue 30 min".into()));
        assert_eq!(due[1], ("Water plants".into(), "in 9 h".into()));
        // A repeating item is marked, its rule in words above the file.
        assert_eq!(due[2], ("Stretch".into(), "in 11 h ↻".into()));
        assert_eq!(due[3], ("In Paris".into(), "context".into()));
        let due_tab = tabs.iter().find(|t| t.kind == TabKind::Due).unwrap();
        assert!(due_tab.items[0].warn && !due_tab.items[1].warn);
        let view = due_tab.items[2].view.as_deref().unwrap_or_default();
        assert!(
            view.contains("**Due:** Tue 2026-12-01 20:00 +00:00"),
            "{view}"
        );
        assert!(
            view.contains("**Repeats:** every day at 20:00"),
            "the rule in words: {view}"
        );
        assert!(!view.contains("RRULE"), "not the stored rule: {view}");
        assert!(
            due_tab.items[2].detail.starts_with("---\n"),
            "the file as stored"
        );
        let memories = rows(TabKind::Memories);
        assert_eq!(
            memories[0],
            ("Likes green tea".into(), "in context".into()),
            "create_memory pins it"
        );
        assert_eq!(rows(TabKind::Requests)[0].0, "Shorter replies");
        assert!(rows(TabKind::Codex).is_empty());
        let detail = &tabs[0].items[0].detail;
        assert!(detail.contains("photos"), "{detail}");
    }
}
