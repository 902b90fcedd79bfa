//! The MCP servers in the interface: the status bar names servers still starting or
//! failed, and the palette gains each server's tools (with their forms) once it is ready.

use elroy_core::ToolRegistry;
use elroy_mcp_client::{McpClients, Phase, ServerStatus};

use crate::app::App;
use crate::palette::PaletteEntry;

/// The status bar's MCP part: `MCP: 2 starting`, `MCP: github failed`, both joined; `None` when
/// every server is ready (or none was started).
pub fn summary(statuses: &[ServerStatus]) -> Option<String> {
    let starting = statuses
        .iter()
        .filter(|s| s.phase == Phase::Starting)
        .count();
    let failed: Vec<&str> = statuses
        .iter()
        .filter(|s| matches!(s.phase, Phase::Failed(_)))
        .map(|s| s.name.as_str())
        .collect();
    let mut parts = Vec::new();
    if starting > 0 {
        parts.push(format!("{starting} starting"));
    }
    if !failed.is_empty() {
        parts.push(format!("{} failed", failed.join(", ")));
    }
    (!parts.is_empty()).then(|| format!("MCP: {}", parts.join("; ")))
}

/// Brings the status bar and the palette up to date with the servers; `seen` is what the last
/// call saw (a fingerprint of phases and tool names). Returns whether anything changed.
pub fn refresh(
    app: &mut App,
    mcp: &McpClients,
    registry: &ToolRegistry,
    seen: &mut String,
) -> bool {
    let statuses = mcp.statuses();
    let fingerprint = format!(
        "{:?}",
        statuses
            .iter()
            .map(|s| (&s.phase, s.tools.iter().map(|t| &t.0).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
    );
    if fingerprint == *seen {
        return false;
    }
    *seen = fingerprint;
    app.status.mcp = summary(&statuses);
    app.tools = registry
        .snapshot()
        .specs()
        .into_iter()
        .map(PaletteEntry::tool)
        .collect();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(name: &str, phase: Phase) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            kind: "stdio",
            phase,
            tools: Vec::new(),
        }
    }

    #[test]
    fn summary_names_failed_servers_and_counts_starting_ones() {
        assert_eq!(summary(&[status("a", Phase::Ready)]), None);
        assert_eq!(
            summary(&[
                status("a", Phase::Starting),
                status("gh", Phase::Failed("401".into())),
                status("b", Phase::Starting),
            ])
            .as_deref(),
            Some("MCP: 2 starting; gh failed")
        );
    }
}
