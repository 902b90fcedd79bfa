//! [`ToolContext`]: what a tool receives besides its arguments
//! (`docs/tool-rules.md#what-a-tool-receives`). None of it is part of any schema.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::{Caller, Message, RecallItem, TimeContext, ToolError};

/// The user a call acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user's database id, once the database is open.
    pub id: Option<i64>,
    /// The user token (config `user_token`, default `DEFAULT`).
    pub token: String,
    /// `$ELROY_HOME`: global files (config, `state.db`, lock, logs, contrib).
    pub elroy_home: PathBuf,
    /// The user home: `$ELROY_HOME` for `DEFAULT`, else `$ELROY_HOME/users/<token>`
    /// (`docs/formats.md#home-layout`).
    pub user_home: PathBuf,
}

/// What the front-end running the tool can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The interactive chat can restart the session (`restart_session`,
    /// `docs/tools.md#restart_session`); one-shot commands and direct tool calls cannot.
    pub can_restart: bool,
}

/// Why a lazily opened service is not available: the error its opener returned (for example the
/// database's `file is not a database`), kept whole (its `Display` and `source` are the
/// opener's). Shared by every clone of the [`Services`] that tried to open it; the opener is not
/// retried.
#[derive(Debug, Clone, thiserror::Error)]
#[error(transparent)]
pub struct ServiceError(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ServiceError {
    /// Wraps the opener's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ServiceError(Arc::new(error))
    }

    /// The opener's error.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

/// The opener of a lazily initialised service: runs at most once, on the first lookup.
type Opener = Box<dyn Fn() -> Result<Arc<dyn Any + Send + Sync>, ServiceError> + Send + Sync>;

/// A service opened on first use: the opener and the cell holding its outcome.
struct LazyEntry {
    cell: OnceLock<Result<Arc<dyn Any + Send + Sync>, ServiceError>>,
    open: Opener,
}

impl LazyEntry {
    fn get(&self) -> Result<Arc<dyn Any + Send + Sync>, ServiceError> {
        self.cell.get_or_init(|| (self.open)()).clone()
    }
}

#[derive(Clone)]
enum Entry {
    Ready(Arc<dyn Any + Send + Sync>),
    Lazy(Arc<LazyEntry>),
}

/// Shared handles (stores, database, configuration, HTTP client, …) by type. The composition root
/// (`elroy-runtime`) inserts them; tool families look up what they need. This keeps elroy-core free
/// of store types and lets a library user run a single tool family with only its own store.
///
/// An entry is either ready ([`Services::insert`]) or lazy ([`Services::insert_lazy`]): a lazy
/// entry is opened by its opener on the first [`get`](Services::get) /
/// [`require`](Services::require) of its type, once, and every clone of the `Services` shares the
/// outcome. So a command opens only the stores the tools it runs ask for (`elroy tools call
/// get_current_date` opens none).
#[derive(Clone, Default)]
pub struct Services {
    map: HashMap<TypeId, Entry>,
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
        self.map.insert(TypeId::of::<T>(), Entry::Ready(service));
        self
    }

    /// Adds (or replaces) the service of type `T`, opened by `open` on the first lookup of `T`
    /// (at most once; its error is kept and returned to every later lookup).
    pub fn insert_lazy<T, F>(&mut self, open: F) -> &mut Self
    where
        T: Any + Send + Sync,
        F: Fn() -> Result<Arc<T>, ServiceError> + Send + Sync + 'static,
    {
        let open: Opener =
            Box::new(move || open().map(|service| -> Arc<dyn Any + Send + Sync> { service }));
        self.map.insert(
            TypeId::of::<T>(),
            Entry::Lazy(Arc::new(LazyEntry {
                cell: OnceLock::new(),
                open,
            })),
        );
        self
    }

    /// Whether an entry of type `T` exists (ready, or lazy whether opened or not); opens nothing.
    pub fn contains<T: Any + Send + Sync>(&self) -> bool {
        self.map.contains_key(&TypeId::of::<T>())
    }

    /// Whether the service of type `T` is open: ready, or lazy and opened successfully. Opens
    /// nothing.
    pub fn is_open<T: Any + Send + Sync>(&self) -> bool {
        match self.map.get(&TypeId::of::<T>()) {
            Some(Entry::Ready(_)) => true,
            Some(Entry::Lazy(lazy)) => matches!(lazy.cell.get(), Some(Ok(_))),
            None => false,
        }
    }

    /// The service of type `T`: `Ok(None)` when there is no entry for it, the opener's error when
    /// a lazy entry could not be opened.
    ///
    /// # Errors
    /// [`ServiceError`] from the opener of a lazy entry (now or at an earlier lookup).
    pub fn try_get<T: Any + Send + Sync>(&self) -> Result<Option<Arc<T>>, ServiceError> {
        let any = match self.map.get(&TypeId::of::<T>()) {
            None => return Ok(None),
            Some(Entry::Ready(service)) => Arc::clone(service),
            Some(Entry::Lazy(lazy)) => lazy.get()?,
        };
        Ok(any.downcast::<T>().ok())
    }

    /// The service of type `T`, if present and (for a lazy entry) it could be opened.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.try_get::<T>().ok().flatten()
    }

    /// The service of type `T`.
    ///
    /// # Errors
    /// A [`ToolError`] naming the missing type, for runtimes that did not provide it, or saying
    /// why a lazy entry could not be opened.
    pub fn require<T: Any + Send + Sync>(&self) -> Result<Arc<T>, ToolError> {
        match self.try_get::<T>() {
            Ok(Some(service)) => Ok(service),
            Ok(None) => Err(ToolError::new(format!(
                "{} is not available in this runtime",
                short_type_name::<T>()
            ))),
            Err(e) => Err(ToolError::new(format!(
                "{} could not be opened: {e}",
                short_type_name::<T>()
            ))),
        }
    }
}

/// `T`'s name without its module path (`MemoryStore`, not `elroy_memory::store::MemoryStore`), for
/// messages a model or a person reads.
fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let plain = full.split('<').next().unwrap_or(full);
    plain.rsplit("::").next().unwrap_or(plain)
}

/// The database id of the session's user (`users.id`), as a service: the composition root inserts
/// it lazily (opening `state.db` to find or create the user) so that [`ToolContext::user_id`]
/// works for tools that need it while tools that do not never open the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserId(pub i64);

/// The opener of a lazy conversation view.
type ConversationOpener = Box<dyn Fn() -> Vec<Message> + Send + Sync>;

/// A read-only view of the conversation a tool call sees (the active context plus the current
/// turn's messages, in order). A turn passes the messages it has; a direct call passes a lazy view
/// that reads the active context from the transcript only when a tool looks at it
/// ([`ToolContext::is_in_context`]), so a tool that never looks opens no database. Dereferences
/// to `[Message]`.
#[derive(Clone)]
pub struct Conversation(Arc<ConversationInner>);

struct ConversationInner {
    cell: OnceLock<Vec<Message>>,
    open: Option<ConversationOpener>,
}

impl Conversation {
    /// A view of `messages`.
    pub fn new(messages: Vec<Message>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(messages);
        Conversation(Arc::new(ConversationInner { cell, open: None }))
    }

    /// A view read by `open` on first use (at most once).
    pub fn lazy(open: impl Fn() -> Vec<Message> + Send + Sync + 'static) -> Self {
        Conversation(Arc::new(ConversationInner {
            cell: OnceLock::new(),
            open: Some(Box::new(open)),
        }))
    }

    /// The messages, in order (reads a lazy view now).
    pub fn messages(&self) -> &[Message] {
        self.0.cell.get_or_init(|| match &self.0.open {
            Some(open) => open(),
            None => Vec::new(),
        })
    }
}

impl Default for Conversation {
    fn default() -> Self {
        Conversation::new(Vec::new())
    }
}

impl From<Vec<Message>> for Conversation {
    fn from(messages: Vec<Message>) -> Self {
        Conversation::new(messages)
    }
}

impl std::ops::Deref for Conversation {
    type Target = [Message];
    fn deref(&self) -> &[Message] {
        self.messages()
    }
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.cell.get() {
            Some(messages) => f.debug_list().entries(messages).finish(),
            None => f.write_str("Conversation(not read yet)"),
        }
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
    pub conversation: Conversation,
    /// What the front-end can do.
    pub capabilities: Capabilities,
    /// Stores and other shared handles.
    pub services: Services,
    /// Who asked for the call: a person, the model or an MCP client (the permission check's
    /// input, `docs/security.md#who-is-asked`).
    pub caller: Caller,
}

impl ToolContext {
    /// A context for `user` with the system clock in UTC, the process working directory, an empty
    /// conversation and no services.
    pub fn new(user: UserInfo) -> Self {
        ToolContext {
            time: TimeContext::default(),
            user,
            cwd: std::env::current_dir().unwrap_or_default(),
            conversation: Conversation::default(),
            capabilities: Capabilities::default(),
            services: Services::new(),
            caller: Caller::Person,
        }
    }

    /// The user's database id: `user.id` when set, else the [`UserId`] service (opened on first
    /// use by the composition root). `None` when neither is available.
    pub fn user_id(&self) -> Option<i64> {
        self.user
            .id
            .or_else(|| self.services.get::<UserId>().map(|u| u.0))
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

    /// Lazy entries (the kind: a service opened on first lookup, once, shared by clones): not
    /// opened by insertion or by lookups of other types; opened once; an opener's error is kept.
    #[test]
    fn lazy_services_open_once_on_first_use() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let opened = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&opened);
        let mut services = Services::new();
        services.insert_lazy(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(Store(3)))
        });
        services.insert_lazy::<u32, _>(|| {
            Err(ServiceError::new(std::io::Error::other(
                "state.db: not a database",
            )))
        });
        assert!(services.contains::<Store>());
        assert!(!services.is_open::<Store>());
        assert!(services.get::<String>().is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 0);
        let clone = services.clone();
        assert_eq!(*clone.require::<Store>().unwrap(), Store(3));
        assert_eq!(*services.require::<Store>().unwrap(), Store(3));
        assert!(services.is_open::<Store>());
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        assert!(services.get::<u32>().is_none());
        assert!(!services.is_open::<u32>());
        let err = services.require::<u32>().unwrap_err();
        assert_eq!(
            err.message(),
            "u32 could not be opened: state.db: not a database"
        );
    }

    /// A lazy conversation is read only when looked at.
    #[test]
    fn lazy_conversation_reads_on_first_look() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let reads = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&reads);
        let view = Conversation::lazy(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            vec![Message::user("hi")]
        });
        assert_eq!(reads.load(Ordering::SeqCst), 0);
        assert_eq!(view.len(), 1);
        assert_eq!(view.clone().len(), 1);
        assert_eq!(reads.load(Ordering::SeqCst), 1);
    }
}
