//! The server, its version and mechanism; which browser a stream is.

use super::*;

#[test]
fn small_parsers() {
    assert_eq!(parse_version("0.3.65"), Some((0, 3, 65)));
    assert_eq!(parse_version("1.0"), Some((1, 0, 0)));
    assert!(parse_version("0.3.43").unwrap() < PIPEWIRE_MIN_RULES);
    assert_eq!(
        server_of(Some(&info(Some("0.3.40")))).mechanism,
        Mechanism::LaunchEnvironment
    );
    assert_eq!(server_of(None).kind, ServerKind::Unknown);
    let mut ff = record(1, "Firefox", 5, 25_000);
    ff.client_name = Some("Firefox".into());
    ff.application_process_binary = Some("firefox-esr".into());
    assert_eq!(Browser::of_stream(&ff), Some(Browser::Firefox));
    assert_eq!(
        Browser::of_stream(&record(1, "Google Chrome input", 5, 0)),
        Some(Browser::Chrome)
    );
    assert_eq!(Browser::of_stream(&record(1, "parec", 5, 0)), None);
}
