//! The host's history gives the same figures as the extension's own did before the host kept it:
//! fixtures/history/*.json hold calls (two recorded on the e2e rigs, one of edge cases) as the
//! inputs the history saw (phase changes, samples, with their times) and what the background's
//! `CpuHistory` (extension/src/background/cpu-history.ts, before this change) made of them: the
//! CPU-seconds each sample saved and the history at the end. And the audio path is the same
//! selection as the popup's (extension/src/shared/cpu-view.ts).

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::{Path, PathBuf};

use micoff_native::history::{CpuHistory, AUDIO_THREAD_WORDS};
use micoff_native::protocol::{HistorySnapshot, Phase, Role};
use serde_json::Value;

enum Input {
    Phase { t_ms: u64, phase: Phase },
    Sample { t_ms: u64, pct: f64, window_ms: f64 },
}

struct Case {
    inputs: Vec<Input>,
    now_ms: u64,
    saved_per_sample: Vec<f64>,
    snapshot: HistorySnapshot,
}

impl Case {
    fn read(v: &Value) -> Self {
        let inputs = v["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let t_ms = i["t_ms"].as_u64().unwrap();
                match i.get("phase") {
                    Some(phase) => Input::Phase {
                        t_ms,
                        phase: serde_json::from_value(phase.clone()).unwrap(),
                    },
                    None => Input::Sample {
                        t_ms,
                        pct: i["pct"].as_f64().unwrap(),
                        window_ms: i["window_ms"].as_f64().unwrap(),
                    },
                }
            })
            .collect();
        Case {
            inputs,
            now_ms: v["now_ms"].as_u64().unwrap(),
            saved_per_sample: serde_json::from_value(v["saved_per_sample"].clone()).unwrap(),
            snapshot: serde_json::from_value(v["snapshot"].clone()).unwrap(),
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cases() -> Vec<(String, Case)> {
    let dir = root().join("fixtures/history");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let case = Case::read(&v);
            (p.file_name().unwrap().to_string_lossy().into_owned(), case)
        })
        .collect()
}

#[test]
fn the_same_calls_give_the_same_history_and_savings_as_the_extension_did() {
    let cases = cases();
    let names: Vec<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "edge-cases.json",
            "recorded-pipewire.json",
            "recorded-pulseaudio.json"
        ]
    );
    for (name, case) in cases {
        let mut h = CpuHistory::default();
        let mut saved = Vec::new();
        for input in &case.inputs {
            match *input {
                Input::Phase { t_ms, phase } => h.set_phase(t_ms, phase),
                Input::Sample {
                    t_ms,
                    pct,
                    window_ms,
                } => saved.push(h.add_sample(t_ms, pct, window_ms)),
            }
        }
        // The same operations in the same order on the same doubles; within a few ulps only because
        // serde_json's default float parsing is not always correctly rounded (the last digit).
        let got = serde_json::to_value(&saved).unwrap();
        let want = serde_json::to_value(&case.saved_per_sample).unwrap();
        assert!(
            close(&got, &want),
            "{name}: saved per sample\n{got}\n{want}"
        );
        let got = serde_json::to_value(h.snapshot(case.now_ms)).unwrap();
        let want = serde_json::to_value(&case.snapshot).unwrap();
        assert!(close(&got, &want), "{name}: the history\n{got}\n{want}");
        assert!(
            case.snapshot.saved_cpu_s > 1.0,
            "{name}: something was saved"
        );
    }
}

/// Equal JSON, numbers within 1e-14 of each other (relative).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-14 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| close(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

fn cpu_view_ts() -> String {
    std::fs::read_to_string(root().join("extension/src/shared/cpu-view.ts")).unwrap()
}

#[test]
fn the_audio_threads_are_the_popups() {
    let text = cpu_view_ts();
    let pattern: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("export const AUDIO_THREAD = /"))
        .filter_map(|rest| rest.strip_suffix("/i;"))
        .collect();
    assert_eq!(
        pattern,
        [AUDIO_THREAD_WORDS.join("|")],
        "cpu-view.ts must declare `export const AUDIO_THREAD = /{}/i;`",
        AUDIO_THREAD_WORDS.join("|")
    );
}

#[test]
fn the_audio_processes_are_the_popups() {
    // cpu-view.ts: every thread of the audio service and of the audio server's roles counts.
    assert!(cpu_view_ts().contains(
        "const isAudioProcess = (role: string): boolean => role === 'audio_service' || AUDIO_SERVER_ROLES.has(role);"
    ));
    let protocol =
        std::fs::read_to_string(root().join("extension/src/shared/protocol/processes.ts")).unwrap();
    let block: String = protocol
        .lines()
        .skip_while(|l| !l.starts_with("export const AUDIO_SERVER_ROLES"))
        .take_while(|l| !l.starts_with("]);"))
        .collect();
    let ts: Vec<String> = block
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    let rust: Vec<String> = Role::ALL
        .iter()
        .filter(|r| r.is_audio_server())
        .map(|r| r.as_str().to_owned())
        .collect();
    assert_eq!(ts, rust);
    assert_eq!(Role::AudioService.as_str(), "audio_service");
}
