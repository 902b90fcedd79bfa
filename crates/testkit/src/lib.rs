//! # elroy-testkit
//!
//! Test helpers (dev-dependency only):
//!
//! - [`MockServer`]: a loopback OpenAI-compatible server (axum) that replays a script of
//!   [`Reply`]s — streamed (SSE ending with `data: [DONE]`) or not, text and tool calls, raw chunks
//!   (tool-call deltas split any way), empty streams, HTTP errors with `Retry-After` — chosen by
//!   turn ([`MockServer::push`]) or by a predicate on the request ([`MockServer::when`]), and records
//!   every request ([`MockServer::requests`]) so a test can assert what elroy sent: system prompt,
//!   tools, recall pairs, tool results.
//! - The same server speaks Anthropic's Messages API on `POST /v1/messages` (configure
//!   [`MockServer::root_url`] as the base URL of a `claude…` model): the same [`Reply`]s are sent as
//!   Anthropic SSE events or a non-streamed message, errors with Anthropic's error body, and
//!   [`Reply::AnthropicEvents`] sends raw events. [`RecordedRequest`]'s helpers read both forms.
//! - [`corpus`]: deterministic synthetic memory texts (benchmarks, large homes).
//! - [`TempHome`]: a temporary `$ELROY_HOME` with a config pointing at the server and an isolated
//!   environment for child processes.
//!
//! ```no_run
//! use elroy_testkit::{MockServer, Reply, TempHome};
//! let server = MockServer::start();
//! server.push(Reply::tool_call("pwd", "{}")).push(Reply::text("You are in /tmp."));
//! let home = TempHome::with_model(&server.base_url());
//! // run `elroy message "where am I?"` with home.env(), then:
//! assert_eq!(server.chat_requests()[1].tool_results().len(), 1);
//! ```

mod anthropic;
pub mod corpus;
mod home;
mod reply;
mod server;

pub use home::TempHome;
pub use reply::{Release, Reply, ScriptedCall};
pub use server::{MockServer, RecordedRequest};
