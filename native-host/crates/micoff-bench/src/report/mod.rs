//! The report arithmetic and its rendering: per-thread rates grouped into the seeds' columns
//! (client, server main thread, server device thread(s), total), medians over repeats, the relative
//! saving of srbchannel, the latency sweep table; the run's result ([`BenchResult`]) and its text
//! form ([`write_text`]). Pure: no I/O besides the writer it is given.
//!
//! Module map, top down: `text` (the tables and the whole report as text); `result` (what
//! `--json` prints, srbchannel's availability); `runs` (windows and their medians); `saving`
//! (whether a saving means anything); `figures` (the columns); `mode` (modes, srbchannel state).

mod figures;
mod mode;
mod result;
mod runs;
mod saving;
mod text;

pub use figures::{Columns, Figures};
pub use mode::{Mode, SrbchannelState};
pub use result::{Baseline, BenchResult, ServerReport, SrbchannelAvailability};
pub use runs::{median, saving_pct, summarize, Run, Summary};
pub use saving::{same_client_warning, saving_note, SavingNote, SAME_CLIENT, SAVING_MEANS_NOTHING};
pub use text::{fmt_ms, write_sweep, write_table, write_text, BASELINE_LABEL, SYSCALLS_FOOTNOTE};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
