//! Tool-list changes: plugins added, removed or replaced while the server runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use elroy_config::Config;
use elroy_core::ToolSpec;
use elroy_runtime::Runtime;
use rmcp::Peer;
use rmcp::RoleServer;
use tokio::sync::RwLock;

/// How often the plugin locations are checked for changes.
pub const PLUGIN_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// One plugin executable as last seen: path, size in bytes, modification time.
type Seen = (PathBuf, u64, Option<SystemTime>);

/// The plugin executables the configuration points at, then the trust list (trusting or
/// untrusting a plugin changes the tools too), with their size and modification time.
fn fingerprint(config: &Config) -> Vec<Seen> {
    let found = elroy_plugins::discover(
        &config.paths.contrib_dir(),
        &elroy_plugins::configured_entries(config),
    );
    found
        .plugins
        .into_iter()
        .chain([elroy_plugins::TrustStore::new(&config.paths.elroy_home).file()])
        .map(|path| {
            let meta = std::fs::metadata(&path).ok();
            let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
            let modified = meta.and_then(|m| m.modified().ok());
            (path, len, modified)
        })
        .collect()
}

/// The registry a fresh session would build: built-in tools, then the plugins (probed again).
fn rebuild(config: &Config) -> (elroy_core::ToolRegistry, Vec<String>) {
    let mut registry = elroy_runtime::build_registry(config);
    let report = elroy_plugins::load_plugins(config, &mut registry);
    (registry, report.warnings)
}

/// The specs the client is shown (the listing filter applied), so a change of a tool it cannot
/// see is not announced.
fn specs(runtime: &Runtime) -> Vec<ToolSpec> {
    crate::server::listed_specs(runtime)
}

/// Polls the plugin locations every [`PLUGIN_POLL_INTERVAL`]; on a change, re-probes the plugins,
/// swaps the registry and, when the tool list differs, notifies the client. Runs until aborted or
/// the client is gone.
pub(crate) async fn watch(runtime: Arc<RwLock<Runtime>>, peer: Peer<RoleServer>) {
    let config = Arc::clone(&runtime.read().await.config);
    let mut seen = {
        let config = Arc::clone(&config);
        tokio::task::spawn_blocking(move || fingerprint(&config))
            .await
            .unwrap_or_default()
    };
    loop {
        tokio::time::sleep(PLUGIN_POLL_INTERVAL).await;
        let config_now = Arc::clone(&config);
        let Ok(now) = tokio::task::spawn_blocking(move || fingerprint(&config_now)).await else {
            continue;
        };
        if now == seen {
            continue;
        }
        seen = now;
        let config_now = Arc::clone(&config);
        let Ok((registry, warnings)) =
            tokio::task::spawn_blocking(move || rebuild(&config_now)).await
        else {
            continue;
        };
        for warning in &warnings {
            tracing::warn!("{warning}");
            elroy_runtime::output::eprintln(&format!("warning: {warning}"));
        }
        let changed = {
            let mut runtime = runtime.write().await;
            let before = specs(&runtime);
            let mut registry = registry;
            // The versioned home's recorder (and any other observer) keeps seeing every call,
            // and every call still passes the permission check.
            if let Some(observer) = runtime.registry.call_observer() {
                registry.set_call_observer(Arc::clone(observer));
            }
            if let Some(gate) = runtime.registry.permission_gate() {
                registry.set_permission_gate(Arc::clone(gate));
            }
            runtime.registry = registry;
            specs(&runtime) != before
        };
        if changed {
            tracing::info!("mcp: plugin tools changed; notifying the client");
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::info!("mcp: cannot notify the client ({e}); stopping the plugin watch");
                return;
            }
        }
    }
}
