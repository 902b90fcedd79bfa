//! # elroy-orchestrator
//!
//! One elroy session and its turns, as `docs/behaviour.md` describes:
//!
//! - [`Session::start`] (`docs/behaviour.md#start-up-steps` steps 5–6): the soul snapshot of the
//!   bootstrap files (frozen for the session: a `memory` tool write reaches disk at once but the
//!   prompt only at the next session), the system prompt ([`prompt`]), the active context aged out,
//!   repaired and given the current prompt.
//! - [`Session::turn`] (`docs/behaviour.md#one-turn`): load and repair the context; store the user
//!   message **before** any model request (a failed or cancelled turn never loses it); inject one
//!   recall pair (gated by the optional fast-model recall classifier,
//!   `docs/behaviour.md#whether-to-recall` step 3; a chat-model reflection instead of the plain
//!   items with `reflect`, `docs/behaviour.md#injection-and-reflective-recall`) and one due-items
//!   pair ([`ports`]); run the bounded model/tool loop (K6: tool rounds `0..= max_assistant_loops`,
//!   then one round without tools); feed every tool error back to the model (D1–D3); stop a tool
//!   after `max_tool_failures_per_turn` failures (R3); apply effects
//!   (`docs/behaviour.md#applying-effects`); persist the turn as one version
//!   (`docs/behaviour.md#persisting-a-turn`). Events ([`TurnEvent`]) stream to the front-end.
//! - [`Session::after_turn`]: background work after the reply (automatic memory creation,
//!   self-reflection, context compression over `max_tokens`, consolidation when an op-tracked
//!   creation made it due, [`Session::consolidate`]); every step runs even when an earlier one
//!   failed, and the failures come back in [`AfterTurn::failures`].
//!
//! Stores and services built by the composition root (`elroy-runtime`) reach the session through
//! small traits in [`ports`] ([`RecallSource`], [`DueSource`], [`PinResolver`],
//! [`ChangeRecorder`], [`ReflectionSink`], and `elroy_llm::ChatModel` for the models); a session
//! runs without any of them. This crate depends on no tool crate and not on the runtime.
//! Errors are typed ([`SessionError`], [`TurnError`], [`BackgroundError`], [`PortError`]).

mod background;
mod classifier;
mod consolidation;
mod error;
mod events;
mod gate;
pub mod ports;
pub mod prompt;
mod reflect;
mod session;
mod structured;
mod turn;

pub use background::{
    AfterTurn, BackgroundFailure, BackgroundStep, MEMORY_PROMPT, REFLECTION_PHRASES,
    REFLECTION_TITLE, SUMMARY_PROMPT, form_memory, parse_memory_reply, reflection_trigger,
};
pub use classifier::{
    CLASSIFIER_PROMPT, classifier_prompt, classifier_schema, conversation_lines, parse_classifier,
};
pub use consolidation::{
    CLUSTERS_KEPT, CONSOLIDATION_LABEL, CONSOLIDATION_PROMPT, Consolidation, cluster_prompt,
    consolidation_schema, consolidation_system_text, parse_consolidation,
};
pub use error::{BackgroundError, SessionError};
pub use events::{InjectedKind, TurnEvent, fenced};
pub use gate::should_recall;
pub use ports::{
    ChangeRecorder, DueSource, PinResolver, PortError, RecallQuery, RecallSource, Reflection,
    ReflectionSink,
};
pub use reflect::{
    REFLECTION_WINDOW, REFLECTIVE_RECALL_PROMPT, REFLECTIVE_RECALL_TOOL, RecallReflection,
    parse_reflection, reflective_recall_prompt, reflective_recall_schema,
};
pub use session::{Session, SessionParts, Settings};
pub use turn::{DUE_ITEMS_TOOL, FAST_RECALL_TOOL, TurnError, TurnInput, TurnOutcome, new_call_id};
