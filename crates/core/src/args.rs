//! Typed tool arguments: [`ToolArgs`], declared with [`tool_args!`](crate::tool_args).

use serde::de::DeserializeOwned;

use crate::{ParamSpec, ParamType, ToolError, ValidatedArgs};

/// A tool's argument type. Its [`parameters`](ToolArgs::parameters) are the schema's properties, and
/// [`parse_args`] turns validated arguments into the type.
///
/// Declare argument types with [`tool_args!`](crate::tool_args) so the schema and the Rust fields come
/// from one source (robustness R14); implement it by hand only where a schema needs more than the
/// macro offers (for example `enum` lists).
pub trait ToolArgs: DeserializeOwned + Send + 'static {
    /// The parameters in schema order; `None` when the schema has no `parameters` key.
    fn parameters() -> Option<Vec<ParamSpec>>;
}

/// The arguments of a tool that takes none: its schema has no `parameters` key.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct NoArgs {}

impl ToolArgs for NoArgs {
    fn parameters() -> Option<Vec<ParamSpec>> {
        None
    }
}

/// Maps a Rust field type to its schema type and required-ness. `Option<T>` is optional; every
/// other implementor is required.
pub trait ArgType {
    /// The JSON-schema type.
    const TYPE: ParamType;
    /// Whether the parameter goes into `required`.
    const REQUIRED: bool;
}

macro_rules! arg_type {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        impl ArgType for $t {
            const TYPE: ParamType = ParamType::$p;
            const REQUIRED: bool = true;
        }
    )*};
}
arg_type!(String => String, i64 => Integer, f64 => Number, bool => Boolean);

impl<T: ArgType> ArgType for Option<T> {
    const TYPE: ParamType = T::TYPE;
    const REQUIRED: bool = false;
}

/// Deserialises validated arguments into a typed argument struct.
///
/// # Errors
/// [`ToolError`] when the object does not fit the type; after validation against the same type's
/// parameters this only happens for values the schema cannot express (for example an integer that
/// overflows a narrower field).
pub fn parse_args<A: ToolArgs>(args: ValidatedArgs) -> Result<A, ToolError> {
    serde_json::from_value(serde_json::Value::Object(args.into_map()))
        .map_err(|e| ToolError::new(format!("invalid arguments: {e}")))
}

/// Declares a tool's argument struct and its schema parameters in one place.
///
/// Each field is `name: Type => "description"`. `String`, `i64`, `f64` and `bool` fields are
/// required; `Option<…>` fields are optional. The field order is the schema's property order, and
/// required fields appear in `required` in that order.
///
/// The calling crate must depend on `serde` (the struct derives `serde::Deserialize`).
///
/// ```
/// elroy_core::tool_args! {
///     /// Arguments of `read_file`.
///     pub struct ReadFileArgs {
///         path: String => "File path to read.",
///         start_line: Option<i64> => "One-based starting line number to read from.",
///     }
/// }
/// use elroy_core::ToolArgs;
/// let params = ReadFileArgs::parameters().unwrap();
/// assert_eq!(params[0].name, "path");
/// assert!(params[0].required && !params[1].required);
/// ```
#[macro_export]
macro_rules! tool_args {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty => $desc:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, ::serde::Deserialize)]
        #[allow(missing_docs)]
        $vis struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::ToolArgs for $name {
            fn parameters() -> ::std::option::Option<::std::vec::Vec<$crate::ParamSpec>> {
                ::std::option::Option::Some(::std::vec![
                    $( $crate::ParamSpec::new(
                        stringify!($field),
                        <$ty as $crate::ArgType>::TYPE,
                        $desc,
                        <$ty as $crate::ArgType>::REQUIRED,
                    ), )*
                ])
            }
        }
    };
}
