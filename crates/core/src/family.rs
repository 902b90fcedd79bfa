//! What a tool's definition says about it besides its schema and effect: its [`ToolFamily`]
//! (how `docs/tools.md` groups and introduces it) and its [`Lineage`] (Elroy 0.5.0's tool, whose
//! schema must stay Elroy's byte for byte, or elroy's own). Both are declared once, as constants of
//! [`crate::TypedTool`] / [`crate::AsyncTypedTool`], and carried in [`crate::ToolSpec`]; the docs,
//! the golden-schema test and every count of tools are derived from them.

/// A family of tools: the heading and the guide paragraph `docs/tools.md` gives it. Families
/// appear there in the order their first tool was registered, and their tools in registration
/// order ([`crate::ToolRegistry::builtin_specs_in_registration_order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolFamily {
    /// The heading (`Agenda`, `Due items`), also the family's name in the overview list.
    pub title: &'static str,
    /// Markdown shown under the heading before the family's tools: what they work on and the
    /// rules they share.
    pub guide: &'static str,
}

/// Where a tool's schema comes from (`docs/behaviour.md#k1-the-40-tool-schemas-are-elroys-byte-for-byte`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lineage {
    /// Elroy 0.5.0 has this tool: its schema (name, description, parameters, key order) equals
    /// Elroy's golden schema (`testdata/golden/tools_schema.json`) byte for byte.
    Elroy050,
    /// elroy's own tool, not in Elroy's golden schema (also every plugin and MCP tool).
    #[default]
    Own,
}

impl Lineage {
    /// True for Elroy 0.5.0's tools.
    pub fn is_elroy(self) -> bool {
        self == Lineage::Elroy050
    }
}
