//! elroy's user profile tools.
