//! micoff-pulse (skeleton; filled in by its owner).
