// The native messaging protocol between the extension and `micoff-host`, mirrored from
// native-host/PROTOCOL.md (the contract) and native-host/crates/micoff-native/src/protocol/. Both sides test against
// fixtures/protocol/*.json; change all of them together.
//
// Types say who sends them: `ExtensionToHost` (requests) and `HostToExtension` (results, errors,
// events). Everything the host sends is `unknown` until a check of protocol/check-*.ts has passed it.
//
// This file is the protocol's front door: the extension and the e2e import from here; each fact lives
// in one file of protocol/:
//   constants.ts       the host's name, the protocol version, the limits, the error codes
//   requests.ts        extension -> host: the requests
//   processes.ts       payloads: processes and roles     cpu-report.ts     a CPU report
//   audio.ts           the audio server and its streams  doctor-report.ts  micoff-doctor's report
//   latency.ts         capture latency                   history.ts        the phase and the CPU history
//   replies.ts         each request's result, the events, errors, the envelope
//   check-request.ts   a request checked as the host's decoder does
//   check-payloads.ts  the payloads checked; check-replies.ts the envelope, events and results checked
//   (both on guard-kit.ts, which is not re-exported)
export * from './protocol/audio.ts';
export * from './protocol/check-payloads.ts';
export * from './protocol/check-replies.ts';
export * from './protocol/check-request.ts';
export * from './protocol/constants.ts';
export * from './protocol/cpu-report.ts';
export * from './protocol/doctor-report.ts';
export * from './protocol/history.ts';
export * from './protocol/latency.ts';
export * from './protocol/processes.ts';
export * from './protocol/replies.ts';
export * from './protocol/requests.ts';
