//! A `result` payload checked against the request type it answers (used by the fixture tests and
//! available to tools).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::audio::{AudioServerInfo, AudioStreams};
use super::cpu::CpuReport;
use super::doctor::check_doctor_report;
use super::history::{HistorySnapshot, PhaseResult};
use super::latency::{LatencySetResult, LatencyStatus};
use super::power::PowerReading;
use super::processes::Processes;
use super::subscription::SubscriptionResult;
use super::version::Version;

/// Checks a `result` payload against the request type it answers: decodes it into the typed
/// payload and re-encodes it.
pub fn typed_result(request_type: &str, result: &Value) -> Result<Value, String> {
    fn roundtrip<T: Serialize + for<'de> Deserialize<'de>>(v: &Value) -> Result<Value, String> {
        let typed = T::deserialize(v).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }
    match request_type {
        "version" => roundtrip::<Version>(result),
        "processes" => roundtrip::<Processes>(result),
        "cpu_sample" => roundtrip::<CpuReport>(result),
        "subscribe" | "unsubscribe" => roundtrip::<SubscriptionResult>(result),
        "audio_server_info" => roundtrip::<AudioServerInfo>(result),
        "audio_streams" => roundtrip::<AudioStreams>(result),
        "doctor" => check_doctor_report(result).map(|()| result.clone()),
        "latency_status" => roundtrip::<LatencyStatus>(result),
        "latency_set" => roundtrip::<LatencySetResult>(result),
        "power" => roundtrip::<PowerReading>(result),
        "phase" => roundtrip::<PhaseResult>(result),
        "history" => roundtrip::<HistorySnapshot>(result),
        other => Err(format!("no typed result for `{other}`")),
    }
}
