//! What a tool is: [`Tool`] (object-safe, async) and the typed helpers [`TypedTool`] and
//! [`AsyncTypedTool`].

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use crate::{
    ToolArgs, ToolContext, ToolEffect, ToolError, ToolOutput, ToolSpec, ValidatedArgs, parse_args,
};

/// A boxed, sendable future (what [`Tool::call`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool a model or a person can call.
///
/// The registry validates arguments against [`Tool::spec`] before [`Tool::call`] runs, so `args`
/// holds only declared properties of their declared types
/// (`docs/tool-rules.md#argument-validation`).
pub trait Tool: Send + Sync {
    /// The tool's schema.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool.
    ///
    /// # Errors
    /// A [`ToolError`] whose message the registry renders as `Error invoking tool {name}: {message}`.
    fn call<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// A tool with a typed argument struct that runs synchronously (file and database work).
///
/// Wrap it with [`sync_tool`] to register it.
pub trait TypedTool: Send + Sync + 'static {
    /// The argument type; its [`ToolArgs::parameters`] become the schema's parameters.
    type Args: ToolArgs;
    /// The tool name.
    const NAME: &'static str;
    /// The description shown to the model.
    const DESCRIPTION: &'static str;
    /// What the tool may reach (`docs/security.md#effects`).
    const EFFECT: ToolEffect;

    /// Runs the tool.
    ///
    /// # Errors
    /// A [`ToolError`] with the message the model should see.
    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError>;
}

/// A tool with a typed argument struct that runs asynchronously (network, child processes).
///
/// Wrap it with [`async_tool`] to register it.
pub trait AsyncTypedTool: Send + Sync + 'static {
    /// The argument type.
    type Args: ToolArgs;
    /// The tool name.
    const NAME: &'static str;
    /// The description shown to the model.
    const DESCRIPTION: &'static str;
    /// What the tool may reach (`docs/security.md#effects`).
    const EFFECT: ToolEffect;

    /// Runs the tool.
    ///
    /// # Errors
    /// A [`ToolError`] with the message the model should see.
    fn run(
        &self,
        ctx: &ToolContext,
        args: Self::Args,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

fn spec_of<A: ToolArgs>(name: &str, description: &str, effect: ToolEffect) -> ToolSpec {
    ToolSpec::new(name, description, A::parameters()).with_effect(effect)
}

struct SyncAdapter<T> {
    spec: ToolSpec,
    tool: T,
}

impl<T: TypedTool> Tool for SyncAdapter<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let result = parse_args::<T::Args>(args).and_then(|args| self.tool.run(ctx, args));
        Box::pin(std::future::ready(result))
    }
}

struct AsyncAdapter<T> {
    spec: ToolSpec,
    tool: T,
    _marker: PhantomData<fn() -> T>,
}

impl<T: AsyncTypedTool> Tool for AsyncAdapter<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = parse_args::<T::Args>(args)?;
            self.tool.run(ctx, args).await
        })
    }
}

/// Wraps a [`TypedTool`] as a registrable [`Tool`]; its spec comes from `T::NAME`,
/// `T::DESCRIPTION` and `T::Args`.
pub fn sync_tool<T: TypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(SyncAdapter {
        spec: spec_of::<T::Args>(T::NAME, T::DESCRIPTION, T::EFFECT),
        tool,
    })
}

/// Wraps an [`AsyncTypedTool`] as a registrable [`Tool`].
pub fn async_tool<T: AsyncTypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(AsyncAdapter {
        spec: spec_of::<T::Args>(T::NAME, T::DESCRIPTION, T::EFFECT),
        tool,
        _marker: PhantomData,
    })
}
