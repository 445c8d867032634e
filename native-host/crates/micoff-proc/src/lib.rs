//! micoff-proc (skeleton; filled in by its owner).
