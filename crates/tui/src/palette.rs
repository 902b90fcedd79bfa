//! The command palette (Ctrl+P): every tool and interface command, fuzzy-filtered with nucleo's
//! matcher; a tool with parameters opens a [`Form`] generated from its schema.

use std::sync::OnceLock;

use elroy_core::{ParamType, ToolSpec};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config as MatcherConfig, Matcher, Utf32Str};

/// Whether the palette lists the tool `name`: every tool but the built-in ones whose definitions
/// say no person calls them (`ToolSpec::in_palette`, declared as `TypedTool::IN_PALETTE`; the
/// model still sees them, and `elroy tools call` still runs them).
pub fn shown_in_palette(name: &str) -> bool {
    static HIDDEN: OnceLock<Vec<String>> = OnceLock::new();
    let hidden = HIDDEN.get_or_init(|| {
        elroy_tools_builtin::builtin_registry()
            .builtin_specs()
            .into_iter()
            .filter(|spec| !spec.in_palette)
            .map(|spec| spec.name.clone())
            .collect()
    });
    !hidden.iter().any(|hidden| hidden == name)
}

/// What a palette entry runs.
#[derive(Debug, Clone, PartialEq)]
pub enum PaletteAction {
    /// A tool (its spec drives the form).
    Tool(ToolSpec),
    /// An interface command (`/agenda`, `/help`, …), run as if typed.
    Command(String),
}

/// One row of the palette.
#[derive(Debug, Clone, PartialEq)]
pub struct PaletteEntry {
    /// The name matched and shown (`add_agenda_item`, `/agenda`).
    pub name: String,
    /// A one-line description.
    pub description: String,
    /// What it runs.
    pub action: PaletteAction,
}

impl PaletteEntry {
    /// An entry for a tool: its description's first line after its effect class (one word:
    /// home, read, network, execute).
    pub fn tool(spec: &ToolSpec) -> Self {
        let first = spec
            .description
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        PaletteEntry {
            name: spec.name.clone(),
            description: format!("{:<7}  {first}", spec.effect.class.as_str()),
            action: PaletteAction::Tool(spec.clone()),
        }
    }
}

/// The palette's state: the query and the entries that match it, best first.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    /// Every entry.
    pub entries: Vec<PaletteEntry>,
    /// The typed filter.
    pub query: String,
    /// Indexes into `entries` that match, best first.
    pub matches: Vec<usize>,
    /// The selected row of `matches`.
    pub selected: usize,
}

impl Palette {
    /// A palette over `entries`, unfiltered.
    pub fn new(entries: Vec<PaletteEntry>) -> Self {
        let mut p = Palette {
            entries,
            ..Palette::default()
        };
        p.refilter();
        p
    }

    /// Sets the query and filters again (selection back to the top).
    pub fn set_query(&mut self, query: String) {
        self.query = query;
        self.refilter();
    }

    fn refilter(&mut self) {
        self.selected = 0;
        if self.query.trim().is_empty() {
            self.matches = (0..self.entries.len()).collect();
            return;
        }
        let mut matcher = Matcher::new(MatcherConfig::DEFAULT);
        let pattern = Pattern::new(
            &self.query,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                pattern
                    .score(Utf32Str::new(&e.name, &mut buf), &mut matcher)
                    .map(|s| (s, i))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.matches = scored.into_iter().map(|(_, i)| i).collect();
    }

    /// The selected entry, if any matches.
    pub fn current(&self) -> Option<&PaletteEntry> {
        self.matches
            .get(self.selected)
            .and_then(|&i| self.entries.get(i))
    }

    /// Moves the selection by `delta`, clamped.
    pub fn step(&mut self, delta: isize) {
        let len = self.matches.len();
        if len == 0 {
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(len - 1);
    }
}

/// One input of a tool form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The parameter name.
    pub name: String,
    /// The declared type (`None`: any JSON).
    pub ty: Option<ParamType>,
    /// Listed in `required`.
    pub required: bool,
    /// Allowed values (Left/Right cycle through them).
    pub choices: Option<Vec<String>>,
    /// The description's first line.
    pub help: String,
    /// What was typed.
    pub value: String,
    /// Existing names this field takes (`*name` fields: agenda items, due items, memories,
    /// requests); Left/Right cycle through them.
    pub names: Vec<String>,
}

/// A form for one tool, generated from its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// The tool.
    pub tool: String,
    /// Its description's first line.
    pub description: String,
    /// One field per parameter, in schema order.
    pub fields: Vec<Field>,
    /// The focused field.
    pub focus: usize,
    /// The registry's error for the last submission (shown under the fields).
    pub error: Option<String>,
}

impl Form {
    /// The form of `spec`, or `None` when the tool takes no parameters (it runs at once).
    pub fn for_spec(spec: &ToolSpec) -> Option<Form> {
        let params = spec.params.as_ref().filter(|p| !p.is_empty())?;
        Some(Form {
            tool: spec.name.clone(),
            description: spec
                .description
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_owned(),
            fields: params
                .iter()
                .map(|p| Field {
                    name: p.name.clone(),
                    ty: p.ty,
                    required: p.required,
                    choices: p.enum_values.clone(),
                    help: p
                        .description
                        .as_deref()
                        .and_then(|d| d.lines().next())
                        .unwrap_or("")
                        .trim()
                        .to_owned(),
                    value: String::new(),
                    names: Vec::new(),
                })
                .collect(),
            focus: 0,
            error: None,
        })
    }

    /// The focused field.
    pub fn field_mut(&mut self) -> Option<&mut Field> {
        self.fields.get_mut(self.focus)
    }

    /// Cycles the focused field's enum choice (or toggles a boolean) by `delta`.
    pub fn cycle(&mut self, delta: isize) {
        let Some(field) = self.field_mut() else {
            return;
        };
        let choices: Vec<String> = match (&field.choices, field.ty) {
            (Some(c), _) => c.clone(),
            (None, Some(ParamType::Boolean)) => vec!["true".into(), "false".into()],
            _ if !field.names.is_empty() => field.names.clone(),
            _ => return,
        };
        if choices.is_empty() {
            return;
        }
        let len = choices.len() as isize;
        let at = choices
            .iter()
            .position(|c| *c == field.value)
            .map_or(if delta > 0 { -1 } else { 0 }, |i| i as isize);
        let next = (at + delta).rem_euclid(len) as usize;
        field.value = choices[next].clone();
    }

    /// The arguments as the JSON object text a model would send: empty fields left out; integer,
    /// number and boolean fields sent as JSON numbers/booleans when they read as one, else as the
    /// typed string (the registry then reports the type error, exactly as for a model's call);
    /// object/array/untyped fields parsed as JSON when they are JSON.
    pub fn arguments(&self) -> String {
        let mut map = serde_json::Map::new();
        for f in &self.fields {
            let raw = f.value.trim();
            if raw.is_empty() {
                continue;
            }
            let value = match f.ty {
                Some(ParamType::String) => serde_json::Value::String(f.value.clone()),
                Some(ParamType::Integer) => {
                    raw.parse::<i64>().map_or_else(|_| raw.into(), Into::into)
                }
                Some(ParamType::Number) => raw
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| raw.into(), serde_json::Value::Number),
                Some(ParamType::Boolean) => match raw {
                    "true" => true.into(),
                    "false" => false.into(),
                    _ => raw.into(),
                },
                _ => serde_json::from_str(raw).unwrap_or_else(|_| raw.into()),
            };
            map.insert(f.name.clone(), value);
        }
        serde_json::Value::Object(map).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::ParamSpec;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec::new(name, format!("Does {name}."), None)
    }

    /// The hidden tools are the ones whose definitions say so, and only those: the three
    /// session tools no person calls, not the rest of their family nor unknown (plugin) names.
    #[test]
    fn the_palette_hides_what_the_definitions_hide() {
        for hidden in ["get_fast_recall", "restart_session", "get_current_date"] {
            assert!(!shown_in_palette(hidden), "{hidden}");
        }
        for shown in ["add_agenda_item", "memory", "read_file", "hello_plugin"] {
            assert!(shown_in_palette(shown), "{shown}");
        }
    }

    #[test]
    fn fuzzy_filter_puts_the_best_match_first() {
        let mut p = Palette::new(vec![
            PaletteEntry::tool(&spec("add_agenda_item")),
            PaletteEntry::tool(&spec("complete_agenda_item")),
            PaletteEntry::tool(&spec("web_search")),
        ]);
        p.set_query("cmpag".into());
        assert_eq!(
            p.current().map(|e| e.name.as_str()),
            Some("complete_agenda_item")
        );
        assert_eq!(p.matches.len(), 1);
        p.set_query("agenda".into());
        assert_eq!(p.matches.len(), 2);
        p.set_query("zzz".into());
        assert!(p.current().is_none());
    }

    #[test]
    fn form_arguments_keep_types_and_leave_empty_fields_out() {
        let mut s = spec("ls");
        s.params = Some(vec![
            ParamSpec::new("path", ParamType::String, "", true),
            ParamSpec::new("max", ParamType::Integer, "", false),
            ParamSpec::new("deep", ParamType::Boolean, "", false),
            ParamSpec::new("skip", ParamType::String, "", false),
        ]);
        let mut form = Form::for_spec(&s).expect("has params");
        form.fields[0].value = "12".into();
        form.fields[1].value = "12".into();
        form.focus = 2;
        form.cycle(1);
        assert_eq!(form.arguments(), r#"{"path":"12","max":12,"deep":true}"#);
        form.fields[1].value = "many".into();
        assert_eq!(
            form.arguments(),
            r#"{"path":"12","max":"many","deep":true}"#
        );
        assert!(Form::for_spec(&spec("pwd")).is_none());
    }
}
