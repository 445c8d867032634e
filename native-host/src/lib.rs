//! micoff-host library (skeleton).
