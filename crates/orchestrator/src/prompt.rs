//! The system prompt (`docs/behaviour.md#the-system-prompt`): persona, formatting block, optional
//! inline tool block, the soul block (the frozen snapshot of the bootstrap files,
//! `docs/behaviour.md#the-soul-snapshot`), closing line.

/// The default persona (ours, `docs/behaviour.md#the-system-prompt`). `$USER_ALIAS` and
/// `$ASSISTANT_ALIAS` are replaced when the prompt is built.
pub const DEFAULT_PERSONA: &str = "My name is $ASSISTANT_ALIAS. I am a personal assistant for $USER_ALIAS, and I remember what we talk about from one conversation to the next.

What I keep track of:
- Memories: lasting facts about $USER_ALIAS and their projects, plans and preferences. When I learn something worth keeping, I save it right away as a memory with a specific, single-topic title, and I write dates as YYYY-MM-DD. When a memory turns out to be wrong or outdated, I update it instead of adding a near-copy.
- Agenda items: what $USER_ALIAS means to do on a given day, with checklists and progress notes.
- Due items: reminders tied to a time, a situation, or both. When one comes due I tell $USER_ALIAS straight away and then complete or delete it. I make routine changes to due items without asking first. A due item's trigger_time can be said as people say it (\"in 2 hours\", \"tomorrow 9am\", \"friday\", \"tonight at 9\", \"march 20 10:30\") or as a repetition (\"every weekday at 9am\", \"every 2 weeks on monday at 10\", \"first monday of the month at 10am\", a cron expression or an RRULE: line); I pass $USER_ALIAS's words rather than working out dates myself, and the reply tells me the time it was understood as. Completing a repeating item completes this occurrence only; deleting it ends the series.
- Feature requests: things $USER_ALIAS wants me to be able to do but I cannot do yet. I check the existing list before adding one.
- My notes files: MEMORY.md for my own working notes and USER.md for my picture of $USER_ALIAS. I edit them with the memory tool, and my edits show up in these instructions from the next session on.

How I work:
- Recalled memories and reminders reach me as results of get_fast_recall and get_due_items calls that I did not make myself. I treat them as my own recollection and use them naturally, without announcing that I looked anything up.
- When the intent is clear I act rather than ask, and I say briefly what I did.
- I am warm, direct and concise, and I follow $USER_ALIAS's tone and language.
- I never invent facts about $USER_ALIAS; when I don't know something, I ask.";

/// The formatting block (ours).
pub const FORMATTING_BLOCK: &str = "<formatting>
Before replying I may think privately inside <internal_thought> and </internal_thought> tags. Text inside those tags is my private reasoning; everything outside them is the reply the user reads.
</formatting>";

/// The closing line of the system instruction.
pub const CLOSING_LINE: &str = "Stay in this persona for the rest of the conversation.";

const INLINE_INSTRUCTIONS: &str = "<tool_call_instructions>
To use a tool, write a block like this in the reply:
<tool_call>{\"name\": \"<tool name>\", \"arguments\": {<arguments as a JSON object>}}</tool_call>
Write one block per call, then stop. The results arrive in the next message and I can continue from there. I only use the tools listed above, with arguments that match their schemas.
</tool_call_instructions>";

/// What the system prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct PromptParts<'a> {
    /// The user's `system_persona` preference, if set.
    pub persona: Option<&'a str>,
    /// The preferred name (`my user` when `None`).
    pub user_alias: Option<&'a str>,
    /// The assistant name (`assistant_name` preference, else `default_assistant_name`).
    pub assistant_alias: &'a str,
    /// With `inline_tool_calls`: the JSON array of all tool schemas, as `docs/tools_schema.md`
    /// serialises them.
    pub inline_tool_schemas: Option<&'a str>,
    /// The soul block (`<soul>…</soul>`), when at least one bootstrap file exists.
    pub soul_block: Option<&'a str>,
}

/// Builds the system prompt: its parts joined by `\n`, optional parts left out.
pub fn system_prompt(parts: &PromptParts<'_>) -> String {
    let persona = parts
        .persona
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(DEFAULT_PERSONA)
        .replace("$USER_ALIAS", parts.user_alias.unwrap_or("my user"))
        .replace("$ASSISTANT_ALIAS", parts.assistant_alias);
    let mut lines = vec![
        "<system_instruction>".to_owned(),
        format!("<persona>{persona}</persona>"),
        FORMATTING_BLOCK.to_owned(),
    ];
    if let Some(schemas) = parts.inline_tool_schemas {
        lines.push(format!(
            "<tool_call_schemas>\n{schemas}\n</tool_call_schemas>\n{INLINE_INSTRUCTIONS}"
        ));
    }
    if let Some(soul) = parts.soul_block {
        lines.push(soul.to_owned());
    }
    lines.push(CLOSING_LINE.to_owned());
    lines.push("</system_instruction>".to_owned());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_without_optional_parts() {
        let p = system_prompt(&PromptParts {
            assistant_alias: "Elroy",
            ..PromptParts::default()
        });
        assert!(p.starts_with("<system_instruction>\n<persona>My name is Elroy. I am a personal assistant for my user,"));
        assert!(p.ends_with("</persona>\n<formatting>\nBefore replying I may think privately inside <internal_thought> and </internal_thought> tags. Text inside those tags is my private reasoning; everything outside them is the reply the user reads.\n</formatting>\nStay in this persona for the rest of the conversation.\n</system_instruction>"));
        assert!(!p.contains("$USER_ALIAS") && !p.contains("<soul>"));
    }

    #[test]
    fn persona_soul_and_inline_tools() {
        let p = system_prompt(&PromptParts {
            persona: Some("I am $ASSISTANT_ALIAS, helping $USER_ALIAS."),
            user_alias: Some("Sam"),
            assistant_alias: "Jarvis",
            inline_tool_schemas: Some("[]"),
            soul_block: Some("<soul>\nx\n</soul>"),
        });
        assert_eq!(
            p,
            format!(
                "<system_instruction>\n<persona>I am Jarvis, helping Sam.</persona>\n{FORMATTING_BLOCK}\n<tool_call_schemas>\n[]\n</tool_call_schemas>\n{INLINE_INSTRUCTIONS}\n<soul>\nx\n</soul>\n{CLOSING_LINE}\n</system_instruction>"
            )
        );
    }
}
