//! [`ToolContext`]: what a tool receives besides its arguments (`tools.md` §0.8). None of it is part
//! of any schema.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::{Message, RecallItem, TimeContext, ToolError};

/// The user a call acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user's database id, once the database is open.
    pub id: Option<i64>,
    /// The user token (config `user_token`, default `DEFAULT`).
    pub token: String,
    /// `$ELROY_HOME`: global files (config, `state.db`, lock, logs, contrib).
    pub elroy_home: PathBuf,
    /// The user home: `$ELROY_HOME` for `DEFAULT`, else `$ELROY_HOME/users/<token>` (`formats.md` §1.1).
    pub user_home: PathBuf,
}

/// What the front-end running the tool can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The interactive chat can restart the session (`restart_session`, `tools.md` §7.2);
    /// one-shot commands and direct tool calls cannot.
    pub can_restart: bool,
}

/// Shared handles (stores, database, configuration, HTTP client, …) by type. The runtime that opens
/// a home inserts them; tool families look up what they need. This keeps elroy-core free of store
/// types and lets a library user run a single tool family with only its own store.
#[derive(Clone, Default)]
pub struct Services {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("count", &self.map.len())
            .finish()
    }
}

impl Services {
    /// No services.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the service of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, service: Arc<T>) -> &mut Self {
        self.map.insert(TypeId::of::<T>(), service);
        self
    }

    /// The service of type `T`, if present.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .cloned()
            .and_then(|s| s.downcast::<T>().ok())
    }

    /// The service of type `T`.
    ///
    /// # Errors
    /// A [`ToolError`] naming the missing type, for runtimes that did not provide it.
    pub fn require<T: Any + Send + Sync>(&self) -> Result<Arc<T>, ToolError> {
        self.get::<T>().ok_or_else(|| {
            ToolError::new(format!(
                "{} is not available in this runtime",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// Everything a tool call may use besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Now and the configured time zone.
    pub time: TimeContext,
    /// The user the call acts for.
    pub user: UserInfo,
    /// The working directory relative paths resolve against (filesystem tools).
    pub cwd: PathBuf,
    /// A read-only view of the active context plus the current turn's new messages, in order
    /// (answers "is this item already in context?").
    pub conversation: Arc<Vec<Message>>,
    /// What the front-end can do.
    pub capabilities: Capabilities,
    /// Stores and other shared handles.
    pub services: Services,
}

impl ToolContext {
    /// A context for `user` with the system clock in UTC, the process working directory, an empty
    /// conversation and no services.
    pub fn new(user: UserInfo) -> Self {
        ToolContext {
            time: TimeContext::default(),
            user,
            cwd: std::env::current_dir().unwrap_or_default(),
            conversation: Arc::new(Vec::new()),
            capabilities: Capabilities::default(),
            services: Services::new(),
        }
    }

    /// Whether a recall message in the conversation view carries `item`.
    pub fn is_in_context(&self, item: RecallItem) -> bool {
        self.conversation
            .iter()
            .filter_map(Message::recall_metadata)
            .any(|meta| meta.iter().any(|m| m.item() == item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Store(u8);

    #[test]
    fn services_by_type() {
        let mut services = Services::new();
        assert!(services.get::<Store>().is_none());
        assert!(
            services
                .require::<Store>()
                .unwrap_err()
                .message()
                .ends_with("is not available in this runtime")
        );
        services.insert(Arc::new(Store(7)));
        assert_eq!(*services.require::<Store>().unwrap(), Store(7));
    }
}
