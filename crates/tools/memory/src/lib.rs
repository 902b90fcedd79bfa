//! elroy's memory and context tools.
