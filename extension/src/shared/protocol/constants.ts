// What both ends of the protocol agree on by name and number: the host's name, the protocol version,
// the limits the host enforces, the stable error codes (native-host/PROTOCOL.md).
// native-host/tests/host_name.rs reads HOST_NAME and ErrorCode from this file.

/** The native messaging host name; the Rust side's is `HOST_NAME` in native-host/crates/micoff-native/src/lib.rs
 * (native-host/tests/host_name.rs checks they agree). */
export const HOST_NAME = 'org.micoff.host';
export const PROTOCOL_VERSION = 1;
/** Host -> browser frame limit (the browser closes the port above it). */
export const MAX_HOST_MESSAGE_BYTES = 1024 * 1024;
export const CPU_WINDOW_MS = { min: 100, max: 60_000 } as const;
export const CPU_INTERVAL_MS = { min: 250, max: 60_000, default: 1000 } as const;
export const MAX_PIDS = 256;
export const MAX_PID = 2_147_483_647;
export const MAX_IN_FLIGHT = 32;
export const MAX_SUBSCRIPTIONS = 8;
/** `latency_set` `capture_ms`: what the host accepts (null resets to the browser's default). */
export const CAPTURE_MS = { min: 10, max: 200 } as const;

export const ErrorCode = {
  InvalidJson: 1,
  InvalidRequest: 2,
  UnknownType: 3,
  TooLarge: 4,
  AudioServerUnavailable: 5,
  NotFound: 6,
  Internal: 7,
  Busy: 8,
  NotImplemented: 9,
  Forbidden: 10,
} as const;
export type KnownErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
