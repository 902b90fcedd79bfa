//! The integration tests of `elroy`: one test executable for the package
//! (`cargo test -p elroy --test elroy [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod anthropic_chat;
mod approvals;
mod background_memory;
mod chat_interactive;
mod chat_message;
mod common;
mod concurrency;
mod consolidation;
mod contrib_plugins;
mod doctor;
mod doctor_faults;
mod durability;
mod embed_worker;
mod first_run;
mod fixture_replay;
mod history;
mod import_chats;
mod import_elroy;
mod import_summarize;
mod interface;
mod mcp;
mod mcp_client;
mod mcp_client_faults;
mod mcp_python_sdk;
mod memory_undo;
mod permissions;
mod readme;
mod recall;
mod reliability;
mod reminders;
mod serve;
mod serve_mcp;
mod sync;
mod sync_git;
mod tools_cli;
