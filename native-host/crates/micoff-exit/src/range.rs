//! A numeric option's range and unit, one value that the option's check, its `--help` text and
//! its error message all read ([`Range::parse`] is a clap value parser), so the three never
//! disagree.

use std::fmt::Display;
use std::str::FromStr;

/// A process id (`--pid`, `--browser-pid`, `--server-pid`): 1 to Linux's largest,
/// `PID_MAX_LIMIT` (2^22).
pub const PID: Range<u32> = Range::new(1, 4_194_304, "");

/// The values an option takes: `min` to `max` (both included), counted in `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range<T> {
    pub min: T,
    pub max: T,
    /// What one counts: `ms`, `s`, `rows`. Empty for a plain count.
    pub unit: &'static str,
}

impl<T: Copy + PartialOrd + Display + FromStr> Range<T> {
    pub const fn new(min: T, max: T, unit: &'static str) -> Self {
        Self { min, max, unit }
    }

    pub fn contains(&self, value: T) -> bool {
        self.min <= value && value <= self.max
    }

    /// `10-200 ms`.
    pub fn describe(&self) -> String {
        if self.unit.is_empty() {
            format!("{}-{}", self.min, self.max)
        } else {
            format!("{}-{} {}", self.min, self.max, self.unit)
        }
    }

    /// An option's help: the sentence `what` (ending in a period), then the range:
    /// `Capture latency. Range: 10-200 ms.`
    pub fn help(&self, what: &str) -> String {
        format!("{what} Range: {}.", self.describe())
    }

    /// Parses and checks `text` (a clap value parser: `value_parser = |s: &str| R.parse(s)`).
    pub fn parse(&self, text: &str) -> Result<T, String> {
        let value: T = text
            .trim()
            .parse()
            .map_err(|_| format!("not a number; give {}", self.describe()))?;
        // NaN is in no range (every comparison with it is false).
        if self.contains(value) {
            Ok(value)
        } else {
            Err(format!("out of range; give {}", self.describe()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_checks_and_parses() {
        const MS: Range<u32> = Range::new(10, 200, "ms");
        const S: Range<f64> = Range::new(0.25, 600.0, "s");
        assert_eq!(MS.describe(), "10-200 ms");
        assert_eq!(S.describe(), "0.25-600 s");
        assert_eq!(Range::new(1u32, 100, "").describe(), "1-100");
        assert_eq!(
            MS.help("Capture latency."),
            "Capture latency. Range: 10-200 ms."
        );
        assert_eq!(MS.parse(" 40 "), Ok(40));
        assert_eq!(MS.parse("9"), Err("out of range; give 10-200 ms".into()));
        assert_eq!(MS.parse("x"), Err("not a number; give 10-200 ms".into()));
        assert!(S.parse("NaN").is_err());
        assert!(S.parse("inf").is_err());
        assert_eq!(S.parse("0.25"), Ok(0.25));
    }
}
