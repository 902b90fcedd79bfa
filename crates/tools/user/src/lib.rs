//! # elroy-tools-user
//!
//! The four user tools of `docs/tools.md#user-profile`: `get_user_full_name`,
//! `get_user_preferred_name`, `set_user_full_name`, `set_user_preferred_name`. They read and write
//! the user's row of `user_preferences` (`docs/formats.md#users-and-preferences`) through the
//! [`Db`] found in `ctx.services`, for `ctx.user_id()`. Strings are Elroy's (K3).

use std::sync::Arc;

use elroy_core::{
    Lineage, NoArgs, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolRegistry,
    TypedTool, sync_tool,
};
use elroy_db::{Db, PreferenceField, UserPreferences};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "User profile",
    guide: "Your full and preferred names, kept in the database for the current user token.",
};

/// Registers the four user tools.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(GetUserFullName))
        .register(sync_tool(SetUserFullName))
        .register(sync_tool(GetUserPreferredName))
        .register(sync_tool(SetUserPreferredName));
}

/// The name shown when none is stored (`docs/tools.md#user-profile`).
pub const DEFAULT_USER_NAME: &str = "User";

fn db_and_user(ctx: &ToolContext) -> Result<(Arc<Db>, i64), ToolError> {
    let db = ctx.services.require::<Db>()?;
    let user = ctx
        .user_id()
        .ok_or_else(|| ToolError::new("no user is open in this runtime"))?;
    Ok((db, user))
}

fn prefs(ctx: &ToolContext) -> Result<(Arc<Db>, i64, UserPreferences), ToolError> {
    let (db, user) = db_and_user(ctx)?;
    let prefs = db
        .preferences(user)
        .map_err(|e| ToolError::new(e.to_string()).with_io_kind(e.io_kind()))?;
    Ok((db, user, prefs))
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// `get_user_full_name` (`docs/tools.md#get_user_full_name`): the stored full name, or `Unknown
/// name`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetUserFullName;

impl TypedTool for GetUserFullName {
    type Args = NoArgs;
    const NAME: &'static str = "get_user_full_name";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Returns the user's full name.";

    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let (_, _, p) = prefs(ctx)?;
        Ok(ToolOutput::text(
            non_empty(p.full_name).unwrap_or_else(|| "Unknown name".to_owned()),
        ))
    }
}

/// `get_user_preferred_name` (`docs/tools.md#get_user_preferred_name`): the stored preferred name,
/// or `User`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetUserPreferredName;

impl TypedTool for GetUserPreferredName {
    type Args = NoArgs;
    const NAME: &'static str = "get_user_preferred_name";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Returns the user's preferred name.";

    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let (_, _, p) = prefs(ctx)?;
        Ok(ToolOutput::text(
            non_empty(p.preferred_name).unwrap_or_else(|| DEFAULT_USER_NAME.to_owned()),
        ))
    }
}

elroy_core::tool_args! {
    /// Arguments of `set_user_full_name`.
    pub struct SetUserFullNameArgs {
        full_name: String => "The full name of the user",
        override_existing: Option<bool> => "Whether to override an existing full name, if it is already set. Override existing should only be used if a known full name has been found to be incorrect.",
    }
}

/// `set_user_full_name` (`docs/tools.md#set_user_full_name`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetUserFullName;

impl TypedTool for SetUserFullName {
    type Args = SetUserFullNameArgs;
    const NAME: &'static str = "set_user_full_name";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Sets the user's full name.\n\nGuidance for usage:\n- Should predominantly be used relatively in the user journey. However, ensure to not be pushy in getting personal information early.\n- For existing users, this should be used relatively rarely.";

    fn run(&self, ctx: &ToolContext, args: SetUserFullNameArgs) -> Result<ToolOutput, ToolError> {
        let (db, user, p) = prefs(ctx)?;
        let old = non_empty(p.full_name).unwrap_or_else(|| DEFAULT_USER_NAME.to_owned());
        if old != DEFAULT_USER_NAME && args.override_existing != Some(true) {
            return Ok(ToolOutput::text(format!(
                "Full name already set to {old}. If this should be changed, set override_existing=True."
            )));
        }
        db.set_preference(
            user,
            PreferenceField::FullName,
            Some(&args.full_name),
            ctx.time.now(),
        )
        .map_err(|e| ToolError::new(e.to_string()).with_io_kind(e.io_kind()))?;
        Ok(ToolOutput::text(format!(
            "Full name set to {}. Previous value was {old}.",
            args.full_name
        )))
    }
}

elroy_core::tool_args! {
    /// Arguments of `set_user_preferred_name`.
    pub struct SetUserPreferredNameArgs {
        preferred_name: String => "The user's preferred name.",
        override_existing: Option<bool> => "Whether to override an existing preferred name, if it is already set. Override existing should only be used if a known preferred name has been found to be incorrect.",
    }
}

/// `set_user_preferred_name` (`docs/tools.md#set_user_preferred_name`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetUserPreferredName;

impl TypedTool for SetUserPreferredName {
    type Args = SetUserPreferredNameArgs;
    const NAME: &'static str = "set_user_preferred_name";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Set the user's preferred name. Should predominantly be used relatively early in first conversations, and relatively rarely afterward.";

    fn run(
        &self,
        ctx: &ToolContext,
        args: SetUserPreferredNameArgs,
    ) -> Result<ToolOutput, ToolError> {
        let (db, user, p) = prefs(ctx)?;
        let old = non_empty(p.preferred_name).unwrap_or_else(|| DEFAULT_USER_NAME.to_owned());
        if old != DEFAULT_USER_NAME && args.override_existing != Some(true) {
            return Ok(ToolOutput::text(format!(
                "Preferred name already set to {old}. If this should be changed, use override_existing=True."
            )));
        }
        db.set_preference(
            user,
            PreferenceField::PreferredName,
            Some(&args.preferred_name),
            ctx.time.now(),
        )
        .map_err(|e| ToolError::new(e.to_string()).with_io_kind(e.io_kind()))?;
        Ok(ToolOutput::text(format!(
            "Set user preferred name to {}. Was {old}.",
            args.preferred_name
        )))
    }
}
