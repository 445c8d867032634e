//! micoff-doctor (skeleton; filled in by its owner).
