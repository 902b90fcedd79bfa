//! The sidebar's real contents, read from the home's stores through the runtime's services
//! (opened lazily, shared with the session): agenda, due items, memories, feature requests,
//! Codex sessions and plugin panels. A store that cannot be opened shows its error in its tab.

use std::sync::Arc;

use elroy_agenda::{AgendaStore, Kind};
use elroy_core::{Services, TimeContext, UserId};
use elroy_feature_requests::FeatureRequestStore;
use elroy_memory::MemoryStore;
use elroy_plugins::Panels;
use elroy_tools_codex::CodexSessions;
use jiff::ToSpan;

use crate::sidebar::{SideItem, SidebarSource, Tab, TabKind};

/// Days of the Agenda tab after today.
const AGENDA_DAYS: i64 = 7;
/// Memories and Codex sessions listed at most.
const LIST_LIMIT: usize = 200;

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
        result: Result<Vec<SideItem>, String>,
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

    fn agenda(&self) -> Result<Vec<SideItem>, String> {
        let store: Arc<AgendaStore> = self.services.require().map_err(|e| e.to_string())?;
        let today = self.time.today();
        let mut items = Vec::new();
        for offset in 0..=AGENDA_DAYS {
            let date = today
                .checked_add(offset.days())
                .map_err(|e| e.to_string())?;
            for listed in store.list_items(date).map_err(|e| e.to_string())? {
                let path = store.agenda_dir().join(format!("{}.md", listed.stem));
                let meta = match (offset, listed.checklist_total) {
                    (0, 0) => "today".to_owned(),
                    (0, n) => format!("today {}/{n}", listed.checklist_completed),
                    (_, 0) => date.strftime("%a %d").to_string(),
                    (_, n) => format!(
                        "{} {}/{n}",
                        date.strftime("%a %d"),
                        listed.checklist_completed
                    ),
                };
                let detail = std::fs::read_to_string(&path).unwrap_or_else(|_| listed.text.clone());
                items.push(SideItem {
                    label: first_line(&listed.text),
                    meta,
                    name: listed.stem.clone(),
                    detail,
                    path: Some(path),
                    ..SideItem::default()
                });
            }
        }
        Ok(items)
    }

    fn due(&self) -> Result<Vec<SideItem>, String> {
        let store: Arc<AgendaStore> = self.services.require().map_err(|e| e.to_string())?;
        let now = self.time.now();
        let mut items = Vec::new();
        let timed = store
            .due_now(jiff::Timestamp::MAX)
            .map_err(|e| e.to_string())?;
        let mut timed_names = std::collections::HashSet::new();
        for due in timed {
            let Some(at) = due.trigger_datetime else {
                continue;
            };
            timed_names.insert(due.name.clone());
            let local = at.to_zoned_datetime(self.time.tz.clone());
            let overdue = at <= now;
            let when = if local.date() == self.time.today() {
                local.strftime("%H:%M").to_string()
            } else {
                local.strftime("%b %d %H:%M").to_string()
            };
            let path = store.agenda_dir().join(format!("{}.md", due.stem));
            items.push(SideItem {
                label: due.name.clone(),
                meta: if overdue {
                    format!("overdue {when}")
                } else {
                    when
                },
                name: due.name.clone(),
                detail: std::fs::read_to_string(&path).unwrap_or_else(|_| due.text.clone()),
                path: Some(path),
                warn: overdue,
                highlight: false,
            });
        }
        for entry in store
            .recall_entries(&self.time.tz)
            .map_err(|e| e.to_string())?
        {
            if entry.kind == Kind::Due && !timed_names.contains(&entry.name) {
                items.push(SideItem {
                    label: entry.name.clone(),
                    meta: "context".into(),
                    name: entry.name.clone(),
                    detail: entry.fact.clone(),
                    ..SideItem::default()
                });
            }
        }
        Ok(items)
    }

    fn memories(&self) -> Result<Vec<SideItem>, String> {
        let store: Arc<MemoryStore> = self.services.require().map_err(|e| e.to_string())?;
        let names = store.active_names().map_err(|e| e.to_string())?;
        let mut items = Vec::new();
        for name in names.into_iter().rev().take(LIST_LIMIT) {
            let (detail, path) = match store.active_by_name(&name) {
                Ok(Some(memory)) => (
                    store.text(&memory).unwrap_or_default(),
                    Some(store.path_of(&memory)),
                ),
                _ => (String::new(), None),
            };
            items.push(SideItem {
                label: name.clone(),
                name,
                detail,
                path,
                ..SideItem::default()
            });
        }
        Ok(items)
    }

    fn requests(&self) -> Result<Vec<SideItem>, String> {
        let store: Arc<FeatureRequestStore> = self.services.require().map_err(|e| e.to_string())?;
        let requests = store.requests().map_err(|e| e.to_string())?;
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

    fn codex(&self) -> Result<Vec<SideItem>, String> {
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
                tab.markdown = Some(elroy_plugins::render_panel(panel));
                tab.empty_text = String::new();
                tabs.push(tab);
            }
        }
        tabs
    }
}
