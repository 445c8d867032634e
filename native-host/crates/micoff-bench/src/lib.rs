//! micoff-bench (skeleton; filled in by its owner).
