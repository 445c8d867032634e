//! The stable runner's bounded loop: every seed through the target, then mutations of corpus
//! entries ([`crate::mutate`]) until the time budget is spent, keeping the inputs that show a new
//! behaviour signature and stopping at the first panic (a crash) with the input that caused it.
//! The loop runs on a worker thread watched from the caller's: an input running over the
//! per-input limit is a hang (libFuzzer's `-timeout`); the stuck thread is left behind and the
//! `micoff-fuzz` binary exits.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mutate::{mutate, Rng};

/// How often the watchdog looks at the running input.
const WATCH_EVERY: Duration = Duration::from_millis(20);

/// The limits of one bounded run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Mutations stop once this has passed (the seeds all run first).
    pub budget: Duration,
    /// Mutations stop after this many too, when set: with a fixed rng seed the run is then the
    /// same every time (what `npm test` runs), whatever the machine's speed.
    pub mutations: Option<u64>,
    /// One input running longer than this is a hang.
    pub per_input: Duration,
    /// Inputs are cut to this size.
    pub max_len: usize,
}

/// What a run found: the input, and what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The target panicked on `input` (the panic message).
    Crash { input: Vec<u8>, message: String },
    /// The target was still running `input` after `ran` (over [`Limits::per_input`]).
    Hang { input: Vec<u8>, ran: Duration },
}

/// What a bounded run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub executions: u64,
    /// Distinct behaviour signatures seen.
    pub signatures: usize,
    /// Corpus size at the end (seeds + kept inputs).
    pub corpus: usize,
    pub elapsed: Duration,
    /// A crash or a hang; none when the budget ran out first.
    pub finding: Option<Finding>,
}

/// What the worker shares with the watchdog.
#[derive(Default)]
struct Progress {
    /// The input being run (copied in before each execution).
    current: Mutex<Vec<u8>>,
    /// When the running execution started, in ns since the run's start plus one; 0 between two.
    running_since_ns: AtomicU64,
    executions: AtomicU64,
    signatures: AtomicUsize,
    corpus: AtomicUsize,
}

/// Runs `target` on every seed, then on mutations of corpus entries until `limits.budget` has
/// passed; stops at the first panic or at the first input running over `limits.per_input`. The
/// default panic hook stays quiet meanwhile (the message is returned).
pub fn run_bounded(
    target: crate::Target,
    seeds: Vec<Vec<u8>>,
    dict: &[Vec<u8>],
    limits: Limits,
    rng_seed: u64,
) -> Outcome {
    let start = Instant::now();
    let progress = Arc::new(Progress::default());
    let message = Arc::new(Mutex::new(String::new()));
    let previous_hook = panic::take_hook();
    {
        let message = message.clone();
        panic::set_hook(Box::new(move |info| {
            if let Ok(mut m) = message.lock() {
                *m = info.to_string();
            }
        }));
    }
    let (done, finished) = mpsc::channel();
    let worker = {
        let (progress, message, dict) = (progress.clone(), message.clone(), dict.to_vec());
        std::thread::spawn(move || {
            let crash = fuzz_loop(
                target, seeds, &dict, limits, rng_seed, start, &progress, &message,
            );
            let _ = done.send(crash);
        })
    };
    let finding = loop {
        match finished.recv_timeout(WATCH_EVERY) {
            Ok(crash) => {
                let _ = worker.join();
                break crash;
            }
            // The loop itself panicked outside a target (a bug of this crate): said as a crash.
            Err(RecvTimeoutError::Disconnected) => {
                break Some(Finding::Crash {
                    input: Vec::new(),
                    message: format!(
                        "the fuzz loop itself failed: {}",
                        message.lock().map(|m| m.clone()).unwrap_or_default()
                    ),
                })
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(ran) = running_for(&progress, start) {
                    if ran > limits.per_input {
                        // The worker is stuck in this input: `current` is not written again.
                        let input = progress
                            .current
                            .lock()
                            .map(|c| c.clone())
                            .unwrap_or_default();
                        break Some(Finding::Hang { input, ran });
                    }
                }
            }
        }
    };
    panic::set_hook(previous_hook);
    Outcome {
        executions: progress.executions.load(Ordering::SeqCst),
        signatures: progress.signatures.load(Ordering::SeqCst),
        corpus: progress.corpus.load(Ordering::SeqCst),
        elapsed: start.elapsed(),
        finding,
    }
}

/// How long the running execution has run, or None between two.
fn running_for(progress: &Progress, start: Instant) -> Option<Duration> {
    match progress.running_since_ns.load(Ordering::SeqCst) {
        0 => None,
        since => Some(
            start
                .elapsed()
                .saturating_sub(Duration::from_nanos(since - 1)),
        ),
    }
}

/// The loop (on the worker thread): returns the crash that ended it, or None when the budget ran
/// out.
#[allow(clippy::too_many_arguments)]
fn fuzz_loop(
    target: crate::Target,
    seeds: Vec<Vec<u8>>,
    dict: &[Vec<u8>],
    limits: Limits,
    rng_seed: u64,
    start: Instant,
    progress: &Progress,
    message: &Mutex<String>,
) -> Option<Finding> {
    let mut rng = Rng::new(rng_seed);
    let mut corpus: Vec<Vec<u8>> = if seeds.is_empty() {
        vec![Vec::new()]
    } else {
        seeds
    };
    let mut seen = std::collections::HashSet::new();
    progress.corpus.store(corpus.len(), Ordering::SeqCst);
    let exec = |input: &[u8]| -> Result<u64, Finding> {
        if let Ok(mut current) = progress.current.lock() {
            current.clear();
            current.extend_from_slice(input);
        }
        let since_ns = start.elapsed().as_nanos() as u64 + 1;
        progress.running_since_ns.store(since_ns, Ordering::SeqCst);
        let result = panic::catch_unwind(AssertUnwindSafe(|| target(input)));
        progress.running_since_ns.store(0, Ordering::SeqCst);
        progress.executions.fetch_add(1, Ordering::SeqCst);
        result.map_err(|_| Finding::Crash {
            input: input.to_vec(),
            message: message
                .lock()
                .map(|m| m.clone())
                .unwrap_or_else(|_| "panic".into()),
        })
    };
    for input in corpus.clone() {
        let sig = match exec(&input) {
            Ok(sig) => sig,
            Err(crash) => return Some(crash),
        };
        seen.insert(sig);
        progress.signatures.store(seen.len(), Ordering::SeqCst);
    }
    let mut mutated = 0u64;
    while start.elapsed() < limits.budget && !matches!(limits.mutations, Some(m) if mutated >= m) {
        // Check the clock every 64 inputs.
        let round = limits.mutations.map_or(64, |m| (m - mutated).min(64));
        mutated += round;
        for _ in 0..round {
            let mut input = corpus[rng.below(corpus.len())].clone();
            for _ in 0..=rng.below(4) {
                mutate(&mut rng, &mut input, &corpus, dict, limits.max_len);
            }
            let sig = match exec(&input) {
                Ok(sig) => sig,
                Err(crash) => return Some(crash),
            };
            if seen.insert(sig) {
                corpus.push(input);
                progress.signatures.store(seen.len(), Ordering::SeqCst);
                progress.corpus.store(corpus.len(), Ordering::SeqCst);
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// The panic hook is the process's: one bounded run at a time in this test binary.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    const LIMITS: Limits = Limits {
        budget: Duration::from_secs(20),
        mutations: None,
        per_input: Duration::from_secs(10),
        max_len: 4096,
    };

    #[test]
    fn the_loop_finds_a_planted_bug_and_returns_its_input() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        // A "parser" that panics on a number larger than u32: the interesting numbers find it.
        fn target(d: &[u8]) -> u64 {
            let s = String::from_utf8_lossy(d);
            for w in s.split(|c: char| !c.is_ascii_digit()) {
                if let Ok(n) = w.parse::<u64>() {
                    assert!(n <= u64::from(u32::MAX), "too big: {n}");
                }
            }
            d.len() as u64 % 7
        }
        let out = run_bounded(target, vec![b"irq 12".to_vec()], &[], LIMITS, 42);
        let Some(Finding::Crash { input, message }) = out.finding else {
            panic!("no crash: {out:?}");
        };
        assert!(message.contains("too big"), "{message}");
        assert!(std::panic::catch_unwind(|| target(&input)).is_err());
    }

    /// Lets the thread left stuck in [`hangs_on_a_word`] go once the test is done with it.
    static RELEASE: AtomicBool = AtomicBool::new(false);

    /// A "parser" that never returns on an input holding `hang` (until released).
    fn hangs_on_a_word(d: &[u8]) -> u64 {
        if d.windows(4).any(|w| w == b"hang") {
            while !RELEASE.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        d.len() as u64 % 5
    }

    #[test]
    fn an_input_that_hangs_ends_the_run_at_the_per_input_limit_with_that_input() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let limits = Limits {
            budget: Duration::from_secs(60),
            mutations: None,
            per_input: Duration::from_millis(300),
            ..LIMITS
        };
        let seeds = vec![b"fine".to_vec(), b"a hang here".to_vec(), b"after".to_vec()];
        let out = run_bounded(hangs_on_a_word, seeds, &[], limits, 7);
        RELEASE.store(true, Ordering::SeqCst);
        let Some(Finding::Hang { input, ran }) = out.finding else {
            panic!("no hang: {out:?}");
        };
        assert_eq!(input, b"a hang here");
        assert!(ran > limits.per_input, "{ran:?}");
        // Well before the budget: the per-input limit ended it.
        assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
        assert_eq!(out.executions, 1, "the input that hangs is still running");
    }

    #[test]
    fn a_run_without_a_finding_ends_at_its_budget_with_its_counts() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let limits = Limits {
            budget: Duration::from_millis(200),
            mutations: None,
            ..LIMITS
        };
        let out = run_bounded(|d| d.len() as u64 % 3, vec![b"ab".to_vec()], &[], limits, 3);
        assert_eq!(out.finding, None);
        assert!(out.executions > 64, "{out:?}");
        assert!(out.signatures >= 1 && out.corpus >= 1, "{out:?}");
        assert!(out.elapsed >= limits.budget, "{out:?}");
    }

    #[test]
    fn a_run_of_a_fixed_number_of_mutations_is_the_same_every_time() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let limits = Limits {
            mutations: Some(500),
            ..LIMITS
        };
        let target = |d: &[u8]| d.iter().map(|&b| u64::from(b % 5)).sum::<u64>() % 11;
        let run = || run_bounded(target, vec![b"seed".to_vec()], &[b"x".to_vec()], limits, 9);
        let (a, b) = (run(), run());
        assert_eq!(a.executions, 501, "the seed, then 500 mutations: {a:?}");
        assert_eq!(
            (a.executions, a.signatures, a.corpus),
            (b.executions, b.signatures, b.corpus)
        );
    }
}
