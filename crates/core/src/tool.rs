//! What a tool is: [`Tool`] (object-safe, async) and the typed helpers [`TypedTool`] and
//! [`AsyncTypedTool`].

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use crate::{
    Lineage, ToolArgs, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolSpec,
    ValidatedArgs, parse_args,
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
    /// The family `docs/tools.md` lists it under (every built-in tool names one).
    const FAMILY: Option<&'static ToolFamily> = None;
    /// Elroy 0.5.0's tool (its schema must equal Elroy's golden schema) or elroy's own.
    const LINEAGE: Lineage = Lineage::Own;
    /// Whether the command palette lists it; `false` for a tool no person calls.
    const IN_PALETTE: bool = true;

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
    /// The family `docs/tools.md` lists it under (every built-in tool names one).
    const FAMILY: Option<&'static ToolFamily> = None;
    /// Elroy 0.5.0's tool (its schema must equal Elroy's golden schema) or elroy's own.
    const LINEAGE: Lineage = Lineage::Own;
    /// Whether the command palette lists it; `false` for a tool no person calls.
    const IN_PALETTE: bool = true;

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

/// What a tool's definition declares besides its arguments, gathered for [`spec_of`].
struct Declared {
    name: &'static str,
    description: &'static str,
    effect: ToolEffect,
    family: Option<&'static ToolFamily>,
    lineage: Lineage,
    in_palette: bool,
}

fn spec_of<A: ToolArgs>(d: Declared) -> ToolSpec {
    ToolSpec {
        family: d.family,
        lineage: d.lineage,
        in_palette: d.in_palette,
        ..ToolSpec::new(d.name, d.description, A::parameters()).with_effect(d.effect)
    }
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
/// `T::DESCRIPTION`, `T::Args` and the other constants of its definition.
pub fn sync_tool<T: TypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(SyncAdapter {
        spec: spec_of::<T::Args>(Declared {
            name: T::NAME,
            description: T::DESCRIPTION,
            effect: T::EFFECT,
            family: T::FAMILY,
            lineage: T::LINEAGE,
            in_palette: T::IN_PALETTE,
        }),
        tool,
    })
}

/// Wraps an [`AsyncTypedTool`] as a registrable [`Tool`].
pub fn async_tool<T: AsyncTypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(AsyncAdapter {
        spec: spec_of::<T::Args>(Declared {
            name: T::NAME,
            description: T::DESCRIPTION,
            effect: T::EFFECT,
            family: T::FAMILY,
            lineage: T::LINEAGE,
            in_palette: T::IN_PALETTE,
        }),
        tool,
        _marker: PhantomData,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoArgs;

    const FAMILY: ToolFamily = ToolFamily {
        title: "Tests",
        guide: "Tools of this test.",
    };

    struct Plain;
    impl TypedTool for Plain {
        type Args = NoArgs;
        const NAME: &'static str = "plain";
        const DESCRIPTION: &'static str = "Declares only what it must.";
        const EFFECT: ToolEffect = ToolEffect::HOME_READS;
        fn run(&self, _: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
    }

    struct Declared;
    impl AsyncTypedTool for Declared {
        type Args = NoArgs;
        const NAME: &'static str = "declared";
        const DESCRIPTION: &'static str = "Declares everything.";
        const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
        const FAMILY: Option<&'static ToolFamily> = Some(&FAMILY);
        const LINEAGE: Lineage = Lineage::Elroy050;
        const IN_PALETTE: bool = false;
        async fn run(&self, _: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
    }

    /// The defaults of a definition and declared values both reach the spec, and neither
    /// changes the schema JSON the model sees.
    #[test]
    fn the_definitions_constants_reach_the_spec() {
        let plain = sync_tool(Plain);
        let spec = plain.spec();
        assert_eq!(
            (spec.family, spec.lineage, spec.in_palette, spec.effect),
            (None, Lineage::Own, true, ToolEffect::HOME_READS)
        );
        let declared = async_tool(Declared);
        let spec = declared.spec();
        assert_eq!(
            (spec.family, spec.lineage, spec.in_palette, spec.effect),
            (
                Some(&FAMILY),
                Lineage::Elroy050,
                false,
                ToolEffect::HOME_ADDS
            )
        );
        assert_eq!(
            spec.to_json(),
            ToolSpec::new("declared", "Declares everything.", None).to_json()
        );
    }
}
