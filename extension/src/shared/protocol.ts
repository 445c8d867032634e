// The native messaging protocol between the extension and `micoff-host`, mirrored from
// native-host/PROTOCOL.md (the contract) and micoff-native's protocol/; both sides test against
// fixtures/protocol/*.json, so change them together. Types say who sends them (`ExtensionToHost`, `HostToExtension`); everything the host
// sends is `unknown` until a check of protocol/check-*.ts passed it. This file is the front door the
// extension and the e2e import from; each fact lives in one file of protocol/ (constants, requests,
// payloads by subject, replies, and the checks on guard-kit.ts, which is not re-exported).
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
